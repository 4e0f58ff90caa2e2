import { EffectInFlightError, EffectsError, type EffectsErrorCode } from "./errors";

export type ErrorClass =
  | { kind: "in_flight"; retryAfterMs: number }
  | { kind: "key_reuse" }
  | { kind: "library"; code: EffectsErrorCode; disposition: "retry" | "dead-letter" }
  | { kind: "handler" };

/**
 * For broker adapters: what an error thrown by effects.once / effects.job means.
 * in_flight → redeliver after retryAfterMs; key_reuse → dead-letter; library → follow its
 * disposition; handler → the handler's own error (the claim was released as failed, or rolled
 * back with its transaction): apply the broker's normal retry policy.
 */
export function classifyError(error: unknown): ErrorClass {
  if (!(error instanceof EffectsError)) return { kind: "handler" };
  if (error instanceof EffectInFlightError) return { kind: "in_flight", retryAfterMs: error.retryAfterMs };
  if (error.code === "EFFECT_KEY_REUSE") return { kind: "key_reuse" };
  return { kind: "library", code: error.code, disposition: error.disposition };
}
