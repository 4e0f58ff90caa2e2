import { ApiError, jsonResponse, otherMethods } from "@/lib/api/errors";
import { appendAudit } from "@/lib/auth/audit";
import { withAuth } from "@/lib/auth/with-auth";
import { applyRetention } from "@/lib/features/retention-and-gaps/apply";

export const dynamic = "force-dynamic";

/**
 * POST /api/v1/retention/apply → ApplyResultView: one maintenance run now (premake, detach
 * concurrently, drop). Platform admins only: partitions hold every tenant's effects. Audited.
 */
export const POST = withAuth("admin", async (_request, { principal, ip }) => {
  if (principal.tenantId !== null)
    throw new ApiError("FORBIDDEN", "retention is platform-wide: this needs a platform admin token");
  return jsonResponse(
    await applyRetention({
      actor: `api:${principal.actor}`,
      trigger: "api",
      audit: (tx, entry) => appendAudit(tx, { principal, tenantId: null, ip, ...entry }),
    }),
  );
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
