import { classifyDatabaseError, type DatabaseErrorClass } from "./pg-errors";

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
  | "OUTCOME_NOT_STORABLE"
  | "INVALID_INPUT"
  | "CLAIM_SETTLED"
  | "NOT_IN_TRANSACTION"
  | "LEASE_LOST"
  | "RETENTION_WINDOW"
  | "RETENTION_CONFIG"
  | "INVALID_OPTIONS"
  | "PARTITION_MISSING"
  | "EFFECTS_DATABASE"
  | "EFFECTS_CLOSED"
  | "CITUS_SETUP";

export type Disposition = "retry" | "dead-letter";

export abstract class EffectsError extends Error {
  abstract readonly code: EffectsErrorCode;
  abstract readonly disposition: Disposition;
  /** For bad input: the field at fault (`key`, `tenant`, `jobType`, `lease`, `payload`, `tx`, …). */
  readonly field: string | undefined;
  constructor(message: string, options?: { cause?: unknown; field?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.field = options?.field;
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

/** The tenant or the key is not acceptable (`field` says which). */
export class InvalidEffectKeyError extends EffectsError {
  readonly code = "INVALID_EFFECT_KEY";
  readonly disposition = "dead-letter";
}

/**
 * Any other bad input to once / job / claim / a step: `field` names it (`jobType`, `messageId`,
 * `attempt`, `publishedAt`, `policy`, `payload`, `fn`, `input`, …). Nothing was written.
 */
export class InvalidEffectInputError extends EffectsError {
  readonly code = "INVALID_INPUT";
  readonly disposition = "dead-letter";
}

/**
 * The step ran (its effect happened) but its outcome cannot be stored as JSON in jsonb: a BigInt,
 * a cycle, a function, a Map, a non-finite number, a string with \u0000 or a lone surrogate. The
 * effect is recorded as completed with the marker `outcome_not_storable: <reason>`, so it is never
 * run again; the first caller and every duplicate get this error (`duplicate` says which).
 */
export class OutcomeNotStorableError extends EffectsError {
  readonly code = "OUTCOME_NOT_STORABLE";
  readonly disposition = "dead-letter";
  constructor(
    readonly key: string,
    readonly reason: string,
    readonly duplicate: boolean,
    options?: { cause?: unknown },
  ) {
    super(
      `the outcome of effect ${key} cannot be stored (${reason}); the effect is recorded as completed without an outcome and will not run again: return JSON values (strings, finite numbers, booleans, null, arrays, plain objects)`,
      { cause: options?.cause, field: "outcome" },
    );
  }
}

/** claim.complete() / fail() / abandon() on a claim that was already settled: nothing changed. */
export class ClaimSettledError extends EffectsError {
  readonly code = "CLAIM_SETTLED";
  readonly disposition = "dead-letter";
  constructor(
    readonly key: string,
    readonly settled: "completed" | "failed" | "abandoned",
  ) {
    super(`the claim on effect ${key} was already ${settled}; its stored outcome is never replaced`);
  }
}

/**
 * A transactional step (or a claim) was given a `tx` that is not inside a transaction block (a pool,
 * a PrismaClient, a client without BEGIN, or an aborted transaction). Refused before anything was
 * claimed: in autocommit the claim would commit on its own and the step's writes separately.
 */
export class NotInTransactionError extends EffectsError {
  readonly code = "NOT_IN_TRANSACTION";
  readonly disposition = "dead-letter";
  constructor(detail: string) {
    super(
      `tx is not an open transaction (${detail}): pass the pg client after BEGIN, the mysql2 connection after beginTransaction(), or the Prisma interactive-transaction client; or omit tx and let the library open one`,
      { field: "tx" },
    );
  }
}

/**
 * The claim was made inside a REPEATABLE READ or SERIALIZABLE transaction (PostgreSQL: on MySQL
 * and MariaDB every level is correct, their claims decide on locking reads).
 */
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

/**
 * The database failed under the library (after transient retries where the library owns the
 * transaction): its own statement, the connection of a library-opened transaction, or a connection
 * lost mid-step. `errorClass` is the entry of PG_ERROR_CLASSES the cause matched, if any.
 */
export class EffectsDatabaseError extends EffectsError {
  readonly code = "EFFECTS_DATABASE";
  readonly disposition = "retry";
  readonly errorClass: DatabaseErrorClass | undefined;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.errorClass = classifyDatabaseError(options?.cause);
  }
}

export class EffectsClosedError extends EffectsError {
  readonly code = "EFFECTS_CLOSED";
  readonly disposition = "retry";
}

/**
 * The effects table is distributed by Citus, but a function the library calls is not distributed
 * by tenant beside it (or runs on the coordinator): a claim there would take its advisory lock on
 * the wrong node and no longer serialise with the tenant's other claims, so none is made. Fixed by
 * `npm run db:migrate -- --citus` (or distributeForCitus()); the message names what is missing.
 */
export class CitusSetupError extends EffectsError {
  readonly code = "CITUS_SETUP";
  readonly disposition = "retry";
}

export function isEffectsError(error: unknown): error is EffectsError {
  return error instanceof EffectsError;
}

/**
 * Not raised by the library: thrown by an at-most-once step that knows its effect did not happen
 * (the mailer refused the message with a 4xx, the SMS gateway rejected the number). The claim is
 * then released as failed and the next delivery tries again. Any other throw from an at-most-once
 * step marks it abandoned: after a timeout, a 5xx or a cut connection the email may have gone out,
 * and at most once means never sending it twice.
 */
export class EffectNotAppliedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "EffectNotAppliedError";
  }
}
