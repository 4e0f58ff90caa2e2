import { ApiError, jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseJsonBody, parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { runsQuery, startRunBody } from "@/lib/features/reconciliation/contract";
import { listReconciliationRuns } from "@/lib/features/reconciliation/list-reconciliation-runs";
import { startReconciliation } from "@/lib/features/reconciliation/start-reconciliation";

export const dynamic = "force-dynamic";

/** GET /api/v1/reconciliation/runs?provider=&cursor=&limit= → ReconciliationRunListResponse (viewer; counts for platform tokens). */
export const GET = withAuth("viewer", async (request, { scope }) => {
  const query = parseSearchParams(runsQuery, new URL(request.url));
  return jsonResponse(await listReconciliationRuns(scope, query));
});

/**
 * POST /api/v1/reconciliation/runs { provider, from, to } → 202 { run } (platform admin; audited):
 * a run spans every tenant's effects of the provider's job types. 409 while that window's run holds its lock.
 */
export const POST = withAuth("admin", async (request, { principal, scope, ip }) => {
  if (!scope.platform)
    throw new ApiError("FORBIDDEN", "a reconciliation run spans every tenant: it needs a platform admin token");
  const body = await parseJsonBody(startRunBody, request);
  const run = await startReconciliation({ principal, provider: body.provider, from: body.from, to: body.to, ip });
  return jsonResponse({ run }, { status: 202 });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
