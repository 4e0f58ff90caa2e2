import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { violationsQuery } from "@/lib/features/violations/contract";
import { listViolations } from "@/lib/features/violations/list-violations";

export const dynamic = "force-dynamic";

/** GET /api/v1/violations?jobType=&constraint=&from=&to=&cursor=&limit= → ViolationListResponse (viewer; a tenant token sees its own tenant). */
export const GET = withAuth("viewer", async (request, { scope }) => {
  const query = parseSearchParams(violationsQuery, new URL(request.url));
  return jsonResponse(await listViolations(scope, query));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
