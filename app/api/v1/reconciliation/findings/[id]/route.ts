import { ApiError, jsonResponse, otherMethods } from "@/lib/api/errors";
import { findingIdFromPath } from "@/lib/api/finding-id";
import { withAuth } from "@/lib/auth/with-auth";
import { getFinding } from "@/lib/console/get-finding";

export const dynamic = "force-dynamic";

/** GET /api/v1/reconciliation/findings/{id} → FindingDetail (viewer); another tenant's finding is 404 like a missing one. */
export const GET = withAuth<{ id: string }>("viewer", async (_request, { scope, params }) => {
  const finding = await getFinding(scope, findingIdFromPath(params));
  if (!finding) throw new ApiError("NOT_FOUND", "no finding with this id");
  return jsonResponse(finding);
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
