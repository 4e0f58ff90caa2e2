import { ApiError, jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseJsonBody } from "@/lib/api/parse";
import { appendAudit } from "@/lib/auth/audit";
import { withAuth } from "@/lib/auth/with-auth";
import { retentionSettingsBody } from "@/lib/features/retention-and-gaps/contract";
import { getRetentionSettings } from "@/lib/features/retention-and-gaps/get-retention";
import { updateRetentionSettings } from "@/lib/features/retention-and-gaps/settings";

export const dynamic = "force-dynamic";

/** GET /api/v1/retention/settings → RetentionSettingsView. */
export const GET = withAuth("viewer", async () => jsonResponse(await getRetentionSettings()));

/**
 * PUT /api/v1/retention/settings → SettingsUpdateView. Platform admins only; lowering the
 * retention below a live worker's retry window answers 409 unless { force: true, reason }.
 */
export const PUT = withAuth("admin", async (request, { principal, ip }) => {
  if (principal.tenantId !== null)
    throw new ApiError("FORBIDDEN", "retention is platform-wide: this needs a platform admin token");
  const changes = await parseJsonBody(retentionSettingsBody, request);
  return jsonResponse(
    await updateRetentionSettings(changes, {
      actor: principal.actor,
      audit: (tx, entry) => appendAudit(tx, { principal, tenantId: null, ip, ...entry }),
    }),
  );
});

export const { POST, PATCH, DELETE } = otherMethods(["GET", "PUT"]);
