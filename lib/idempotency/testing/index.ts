/**
 * The idempotency test kit: run your own handler against your real database once, twice, N times
 * at once, re-published, and with a crash at each step boundary, and compare the state each leaves.
 * Framework-free (Vitest, Jest, node:test): it returns a report, and assertIdempotent throws a plain
 * Error. See docs/testing-your-handlers.md.
 */
export {
  type CheckIdempotentOptions,
  checkIdempotent,
  type HandlerContext,
  type IdempotencyReport,
  type KitDelivery,
  type ScenarioKind,
  type ScenarioReport,
  type StepCount,
} from "./check";
export { diffSnapshots } from "./diff";
export type { Boundary, CrashPoint } from "./observe-steps";
export { assertIdempotent, formatReport, IdempotencyCheckError } from "./report";
