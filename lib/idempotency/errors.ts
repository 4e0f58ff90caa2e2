/**
 * Every error the library raises extends EffectsError. Anything else that comes out of
 * effects.once / effects.job is the handler's own error, rethrown unchanged.
 *
 * `disposition` tells a broker adapter what to do with the delivery:
 * - "retry": nack / redeliver later (the effect is in flight, or the database hiccuped)
 * - "dead-letter": retrying cannot help (a caller bug or a policy refusal); park the message
 */
export type EffectsErrorCode =
  | "EFFECT_IN_FLIGHT"
  | "EFFECT_KEY_REUSE"
  | "INVALID_EFFECT_KEY"
  | "ISOLATION_LEVEL"
  | "OUTCOME_TOO_LARGE"
  | "LEASE_LOST"
  | "RETENTION_WINDOW"
  | "RETENTION_CONFIG"
  | "INVALID_OPTIONS"
  | "PARTITION_MISSING"
  | "EFFECTS_DATABASE"
  | "EFFECTS_CLOSED";

export type Disposition = "retry" | "dead-letter";

export abstract class EffectsError extends Error {
  abstract readonly code: EffectsErrorCode;
  abstract readonly disposition: Disposition;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The effect is being run by another delivery whose lease is alive, and `wait` ran out. */
export class EffectInFlightError extends EffectsError {
  readonly code = "EFFECT_IN_FLIGHT";
  readonly disposition = "retry";
  constructor(
    readonly tenant: string,
    readonly key: string,
    /** When the other owner's lease ends (it may still complete before then). */
    readonly leaseUntil: Date | null,
    /** A sensible delay before the adapter redelivers. */
    readonly retryAfterMs: number,
  ) {
    super(`effect ${key} is in progress in another delivery; retry in ${Math.ceil(retryAfterMs / 1000)}s`);
  }
}

/** Same tenant and key, different payload hash: nothing ran. */
export class EffectKeyReuseError extends EffectsError {
  readonly code = "EFFECT_KEY_REUSE";
  readonly disposition = "dead-letter";
  constructor(
    readonly tenant: string,
    readonly key: string,
    readonly firstMessageId: string | null,
  ) {
    super(
      `effect key ${key} was first claimed with a different payload${firstMessageId ? ` (message ${firstMessageId})` : ""}: a key must name one business fact`,
    );
  }
}

export class InvalidEffectKeyError extends EffectsError {
  readonly code = "INVALID_EFFECT_KEY";
  readonly disposition = "dead-letter";
}

/** The claim was made inside a REPEATABLE READ or SERIALIZABLE transaction. */
export class IsolationLevelError extends EffectsError {
  readonly code = "ISOLATION_LEVEL";
  readonly disposition = "dead-letter";
  constructor(
    readonly isolationLevel: string,
    options?: { cause?: unknown },
  ) {
    super(
      `effect claims refuse to run inside a ${isolationLevel.toUpperCase()} transaction: the look into older partitions would use the transaction's old snapshot and could miss a duplicate. Use READ COMMITTED (the default).`,
      options,
    );
  }
}

export class OutcomeTooLargeError extends EffectsError {
  readonly code = "OUTCOME_TOO_LARGE";
  readonly disposition = "dead-letter";
  constructor(
    readonly key: string,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(
      `the outcome of effect ${key} is ${bytes} bytes of JSON, over the ${maxBytes}-byte limit: store an id or a summary, not the payload`,
    );
  }
}

/** Another delivery took this claim over (our lease expired) before we completed it. */
export class LeaseLostError extends EffectsError {
  readonly code = "LEASE_LOST";
  readonly disposition = "retry";
  constructor(
    readonly key: string,
    readonly attempt: number,
  ) {
    super(`lost the lease on effect ${key} (attempt ${attempt}): another delivery took it over; extend long steps' leases`);
  }
}

/** The delivery is older than the retention: its effect record may be pruned, so it is not run. */
export class RetentionWindowError extends EffectsError {
  readonly code = "RETENTION_WINDOW";
  readonly disposition = "dead-letter";
  constructor(
    readonly key: string,
    readonly publishedAt: Date,
    readonly retentionMs: number,
  ) {
    super(
      `message for effect ${key} was published at ${publishedAt.toISOString()}, beyond the ${Math.round(retentionMs / 3_600_000)}h effect retention, and no record of it remains: refusing to run it again blindly`,
    );
  }
}

/** createEffects was given a retention shorter than the longest retry window. */
export class RetentionConfigError extends EffectsError {
  readonly code = "RETENTION_CONFIG";
  readonly disposition = "dead-letter";
}

export class InvalidEffectsOptionsError extends EffectsError {
  readonly code = "INVALID_OPTIONS";
  readonly disposition = "dead-letter";
}

/** No effects partition covers now(): the partition manager has not premade today's. */
export class PartitionMissingError extends EffectsError {
  readonly code = "PARTITION_MISSING";
  readonly disposition = "retry";
}

/** The library's own statement failed (after transient retries). */
export class EffectsDatabaseError extends EffectsError {
  readonly code = "EFFECTS_DATABASE";
  readonly disposition = "retry";
}

export class EffectsClosedError extends EffectsError {
  readonly code = "EFFECTS_CLOSED";
  readonly disposition = "retry";
}

export function isEffectsError(error: unknown): error is EffectsError {
  return error instanceof EffectsError;
}
