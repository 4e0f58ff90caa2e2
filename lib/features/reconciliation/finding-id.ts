import { ApiError } from "../../api/errors";
import { findingIdPath } from "./contract";

/** The {id} path parameter of /api/v1/reconciliation/findings/{id}, or a 400 naming it (a finding id is a positive bigint). */
export function findingIdFromPath(params: { id?: string }): string {
  const parsed = findingIdPath.safeParse({ id: params.id ?? "" });
  if (parsed.success) return parsed.data.id;
  const message = parsed.error.issues[0]?.message ?? "must be an id this API returned";
  throw new ApiError("INVALID_INPUT", `invalid path: id ${message}`, [{ path: "id", message }]);
}
