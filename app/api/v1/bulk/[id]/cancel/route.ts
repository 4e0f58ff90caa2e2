import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parsePathParam } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { cancelBulkAction } from "@/lib/features/bulk-actions/bulk-actions";
import { bulkIdPath } from "@/lib/features/bulk-actions/contract";

export const dynamic = "force-dynamic";

/** POST /api/v1/bulk/{id}/cancel → BulkActionResponse: no item is applied after it (operator; audited). */
export const POST = withAuth<{ id: string }>("operator", async (_request, { scope, principal, ip, params }) => {
  const id = parsePathParam(bulkIdPath.shape.id, "id", params.id);
  return jsonResponse({ action: await cancelBulkAction({ scope, principal, ip, id }) });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
