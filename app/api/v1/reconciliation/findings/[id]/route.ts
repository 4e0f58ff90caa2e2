import { ApiError, jsonResponse, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { readFindingAudited } from "@/lib/features/reconciliation/audited-reads";
import { findingIdFromPath } from "@/lib/features/reconciliation/finding-id";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/reconciliation/findings/{id} → FindingDetail (viewer; audited like a key read);
 * another tenant's finding is 404 like a missing one.
 */
export const GET = withAuth<{ id: string }>("viewer", async (_request, { principal, scope, params, ip }) => {
  const finding = await readFindingAudited({ principal, scope, id: findingIdFromPath(params), ip });
  if (!finding) throw new ApiError("NOT_FOUND", "no finding with this id");
  return jsonResponse(finding);
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
