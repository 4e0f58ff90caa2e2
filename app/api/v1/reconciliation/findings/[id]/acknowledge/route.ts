import { ApiError, jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseJsonBody } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { findingStateBody } from "@/lib/features/reconciliation/contract";
import { findingIdFromPath } from "@/lib/features/reconciliation/finding-id";
import { changeFindingState, FindingStateRefusedError } from "@/lib/features/reconciliation/finding-state";

export const dynamic = "force-dynamic";

/** POST /api/v1/reconciliation/findings/{id}/acknowledge { note } → FindingStateResponse (operator; audited with the change). */
export const POST = withAuth<{ id: string }>("operator", async (request, { principal, scope, params, ip }) => {
  const id = findingIdFromPath(params);
  const { note } = await parseJsonBody(findingStateBody, request);
  try {
    return jsonResponse(await changeFindingState({ principal, scope, id, action: "acknowledge", note, ip }));
  } catch (error) {
    if (error instanceof FindingStateRefusedError) throw new ApiError(error.code, error.message);
    throw error;
  }
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
