import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parsePathParam } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { getBulkAction } from "@/lib/features/bulk-actions/bulk-actions";
import { bulkIdPath } from "@/lib/features/bulk-actions/contract";

export const dynamic = "force-dynamic";

/** GET /api/v1/bulk/{id} → BulkActionResponse: state and progress (viewer; a tenant sees its own). */
export const GET = withAuth<{ id: string }>("viewer", async (_request, { scope, params }) => {
  const id = parsePathParam(bulkIdPath.shape.id, "id", params.id);
  return jsonResponse({ action: await getBulkAction(scope, id) });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
