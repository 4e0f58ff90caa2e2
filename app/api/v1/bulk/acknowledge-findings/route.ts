import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseJsonBody } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { dryRunBulkAcknowledge, startBulkAcknowledge } from "@/lib/features/bulk-actions/bulk-actions";
import { bulkAcknowledgeBody } from "@/lib/features/bulk-actions/contract";

export const dynamic = "force-dynamic";

/**
 * POST /api/v1/bulk/acknowledge-findings {tenant?, kind?, provider?, jobType?, from?, to?, note, dryRun?}
 * → with dryRun: BulkAcknowledgeDryRunResponse; else 202 BulkActionResponse, run in the background
 * (operator; each finding audited; 409 past the cap).
 */
export const POST = withAuth("operator", async (request, { scope, principal, ip }) => {
  const body = await parseJsonBody(bulkAcknowledgeBody, request);
  const filter = {
    kind: body.kind ?? null,
    provider: body.provider ?? null,
    jobType: body.jobType ?? null,
    from: body.from ?? null,
    to: body.to ?? null,
  };
  if (body.dryRun) return jsonResponse(await dryRunBulkAcknowledge({ scope, tenant: body.tenant, filter }));
  // The body's refinement requires the note unless dryRun.
  const note = body.note as string;
  return jsonResponse(
    { action: await startBulkAcknowledge({ scope, principal, ip, tenant: body.tenant, filter, note }) },
    { status: 202 },
  );
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
