import { ApiError, jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseJsonBody, parseSearchParams } from "@/lib/api/parse";
import { appendAudit } from "@/lib/auth/audit";
import { withAuth } from "@/lib/auth/with-auth";
import { consoleDatabase } from "@/lib/console/database";
import { applyAdvice } from "@/lib/features/retention-and-gaps/advice-apply";
import { toAdviceOptions } from "@/lib/features/retention-and-gaps/advice-query";
import { adviceApplyBody, adviceQuery } from "@/lib/features/retention-and-gaps/contract";

export const dynamic = "force-dynamic";

/**
 * POST /api/v1/retention/advice/apply?<the advice's query> {retentionDays, expect, force?, reason?}
 * → SettingsUpdateView: the previewed change, confirmed. Platform admins only (the settings are
 * the fleet's), refused on a read-only console; 409 RETENTION_STALE when the advice or the settings
 * moved since the preview, 400/409 naming the setting in the way otherwise. Audited.
 */
export const POST = withAuth("admin", async (request, { principal, ip }) => {
  if (principal.tenantId !== null)
    throw new ApiError("FORBIDDEN", "retention is platform-wide: this needs a platform admin token");
  const query = parseSearchParams(adviceQuery, new URL(request.url));
  const body = await parseJsonBody(adviceApplyBody, request);
  return jsonResponse(
    await applyAdvice(body, toAdviceOptions(query), {
      db: consoleDatabase(),
      actor: principal.actor,
      audit: (tx, entry) => appendAudit(tx, { principal, tenantId: null, ip, ...entry }),
    }),
  );
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
