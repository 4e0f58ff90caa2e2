import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseJsonBody } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { dryRunBulkRelease, startBulkRelease } from "@/lib/features/bulk-actions/bulk-actions";
import { bulkReleaseBody } from "@/lib/features/bulk-actions/contract";

export const dynamic = "force-dynamic";

/**
 * POST /api/v1/bulk/release {tenant?, q?, jobType?, dryRun?} → with dryRun: BulkDryRunResponse;
 * else 202 BulkActionResponse, run in the background (operator; audited; 409 past the cap).
 */
export const POST = withAuth("operator", async (request, { scope, principal, ip }) => {
  const body = await parseJsonBody(bulkReleaseBody, request);
  const filter = { q: body.q?.trim() || null, jobType: body.jobType ?? null };
  if (body.dryRun) return jsonResponse(await dryRunBulkRelease({ scope, tenant: body.tenant, filter }));
  return jsonResponse({ action: await startBulkRelease({ scope, principal, ip, tenant: body.tenant, filter }) }, { status: 202 });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
