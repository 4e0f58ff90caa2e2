import { EffectInFlightError, EffectsDatabaseError, EffectsError, type EffectsErrorCode } from "./errors";
import { classifyDatabaseError, type DatabaseErrorClass } from "./pg-errors";

export type ErrorClass =
  | { kind: "in_flight"; retryAfterMs: number }
  | { kind: "key_reuse" }
  | { kind: "library"; code: EffectsErrorCode; disposition: "retry" | "dead-letter" }
  /** The database failed under the delivery (a connection cut, a restart): retry it. */
  | { kind: "database"; code: EffectsErrorCode | string; disposition: "retry"; errorClass: DatabaseErrorClass | undefined }
  | { kind: "handler" };

/**
 * For broker adapters: what an error thrown by effects.once / effects.job means.
 * in_flight → redeliver after retryAfterMs; key_reuse → dead-letter; library → follow its
 * disposition; database → retry (EffectsDatabaseError, or a connection-level failure the handler
 * only passed on: class 08, 57P01-57P03, a socket error, pg's "not queryable"); handler → the
 * handler's own error (the claim was released as failed, or rolled back with its transaction):
 * apply the broker's normal retry policy.
 */
export function classifyError(error: unknown): ErrorClass {
  if (!(error instanceof EffectsError)) {
    const db = classifyDatabaseError(error);
    if (db?.kind === "connection") return { kind: "database", code: db.code, disposition: "retry", errorClass: db };
    return { kind: "handler" };
  }
  if (error instanceof EffectInFlightError) return { kind: "in_flight", retryAfterMs: error.retryAfterMs };
  if (error.code === "EFFECT_KEY_REUSE") return { kind: "key_reuse" };
  if (error instanceof EffectsDatabaseError) {
    return { kind: "database", code: error.code, disposition: "retry", errorClass: error.errorClass };
  }
  return { kind: "library", code: error.code, disposition: error.disposition };
}
