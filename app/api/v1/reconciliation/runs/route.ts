import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { runsQuery } from "@/lib/api/reconciliation-query";
import { withAuth } from "@/lib/auth/with-auth";
import { listReconciliationRuns } from "@/lib/console/list-reconciliation-runs";

export const dynamic = "force-dynamic";

/** GET /api/v1/reconciliation/runs?provider=&cursor=&limit= → ReconciliationRunListResponse (viewer; counts for platform tokens). */
export const GET = withAuth("viewer", async (request, { scope }) => {
  const query = parseSearchParams(runsQuery, new URL(request.url));
  return jsonResponse(await listReconciliationRuns(scope, query));
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
