import { z } from "zod";
import { FINDING_KINDS, FINDING_STATES } from "../console/reconciliation-types";
import { bigintId, isoInstant as instant, safeText as text } from "../fields";
import { ApiError } from "./errors";

const tenant = text(255, 1).optional();
const provider = text(100, 1);

/** GET /api/v1/reconciliation/findings query (and the Reconciliation page's URL). */
export const findingsQuery = z
  .object({
    tenant,
    kind: z.enum(FINDING_KINDS).optional(),
    provider: provider.optional(),
    jobType: text(255, 1).optional(),
    state: z.enum(FINDING_STATES).default("open"),
    from: instant.optional(),
    to: instant.optional(),
    cursor: text(1000, 1).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    // The page's open finding (UI state in the same URL); the API ignores it.
    finding: bigintId.optional(),
  })
  .refine((v) => !v.from || !v.to || v.from < v.to, { message: "must be before to", path: ["from"] });

/** GET /api/v1/reconciliation/runs query. */
export const runsQuery = z.object({
  provider: provider.optional(),
  cursor: bigintId.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(20),
});

/** The {id} of /api/v1/reconciliation/findings/{id}. */
export const findingIdParam = bigintId;

/** POST …/findings/{id}/acknowledge and …/resolve body: why (kept with the finding and in the audit log). */
export const findingStateBody = z.object({ note: text(2000, 1) });

/** The longest window one API request may start (a day at a time is what the scheduler does too). */
export const MAX_RUN_WINDOW_DAYS = 7;

/** POST /api/v1/reconciliation/runs body. */
export const startRunBody = z
  .object({ provider, from: instant, to: instant })
  .refine((v) => v.from < v.to, { message: "must be before to", path: ["from"] })
  .refine((v) => v.to.getTime() - v.from.getTime() <= MAX_RUN_WINDOW_DAYS * 86_400_000, {
    message: `the window must be at most ${MAX_RUN_WINDOW_DAYS} days`,
    path: ["to"],
  });

/** The {id} path parameter, or a 400 naming it (a finding id is a positive bigint). */
export function findingIdFromPath(params: { id?: string }): string {
  const parsed = findingIdParam.safeParse(params.id ?? "");
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues[0]?.message ?? "must be an id this API returned";
  throw new ApiError("INVALID_INPUT", `invalid path: id ${message}`, [{ path: "id", message }]);
}
