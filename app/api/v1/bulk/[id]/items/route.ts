import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parsePathParam, parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { listBulkItems } from "@/lib/features/bulk-actions/bulk-actions";
import { bulkIdPath, bulkItemsQuery } from "@/lib/features/bulk-actions/contract";

export const dynamic = "force-dynamic";

/** GET /api/v1/bulk/{id}/items?cursor=&limit= → BulkItemsResponse: the items in run order (viewer; a tenant sees its own). */
export const GET = withAuth<{ id: string }>("viewer", async (request, { scope, params }) => {
  const id = parsePathParam(bulkIdPath.shape.id, "id", params.id);
  const { cursor, limit } = parseSearchParams(bulkItemsQuery, new URL(request.url));
  return jsonResponse(await listBulkItems(scope, id, { cursor, limit }));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
