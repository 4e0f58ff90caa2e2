import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { findingsQuery } from "@/lib/features/reconciliation/contract";
import { listFindings } from "@/lib/features/reconciliation/list-findings";

export const dynamic = "force-dynamic";

/** GET /api/v1/reconciliation/findings?kind=&provider=&jobType=&state=&from=&to=&cursor=&limit= → FindingListResponse (viewer; a tenant token sees its own tenant's findings). */
export const GET = withAuth("viewer", async (request, { scope }) => {
  const query = parseSearchParams(findingsQuery, new URL(request.url));
  return jsonResponse(await listFindings(scope, query));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
