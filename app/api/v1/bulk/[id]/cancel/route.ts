import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parsePathParam } from "@/lib/api/parse";
import { cancelBulkAction } from "@/lib/auth/bulk-actions";
import { withAuth } from "@/lib/auth/with-auth";
import { bulkIdPath } from "@/lib/contract/bulk";

export const dynamic = "force-dynamic";

/** POST /api/v1/bulk/{id}/cancel → BulkActionResponse: no item is applied after it (operator; audited). */
export const POST = withAuth<{ id: string }>("operator", async (_request, { scope, principal, ip, params }) => {
  const id = parsePathParam(bulkIdPath.shape.id, "id", params.id);
  return jsonResponse({ action: await cancelBulkAction({ scope, principal, ip, id }) });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
