import type { DbPolicy } from "./claim-sql";
import type { EffectsCore } from "./core";
import type { TransactionHandle } from "./db";
import type { Delivery } from "./delivery";
import { InvalidEffectInputError } from "./errors";
import { requestHash, validateJobType, validateKey, validateTenant } from "./keys";
import { leaseMsOf, waitMsOf } from "./options";

/** One effect, validated: what runStep and effects.claim work from. */
export interface StepSpec {
  tenant: string;
  key: string;
  jobType: string;
  policy: DbPolicy;
  messageId: string | null;
  deliveryAttempt: number | null;
  /** The broker delivered this message before: the effect is likely done (read-only claim first). */
  redelivered: boolean;
  publishedAt: Date | null;
  /** sha256 of the canonical payload, null without a payload. */
  requestHash: string | null;
  leaseMs: number;
  waitMs: number;
  /** The caller's open transaction to claim in (checked by assertInTransaction before the claim). */
  tx?: TransactionHandle;
  /** The delivery's span context, validated: the claim and step spans link to it (tracing.ts). */
  traceContext: TraceContext | null;
}

type TraceContext = NonNullable<Delivery["traceContext"]>;

/** W3C trace context ids: 32 and 16 lowercase hex digits, not all zero (OpenTelemetry's isValidTraceId/isValidSpanId). */
const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;
const SPAN_ID = /^(?!0{16})[0-9a-f]{16}$/;

function checkTraceContext(value: unknown): TraceContext | null {
  if (value === undefined || value === null) return null;
  const context = value as Partial<TraceContext>;
  if (typeof value !== "object" || typeof context.traceId !== "string" || !TRACE_ID.test(context.traceId)) {
    throw invalid("traceContext", "traceContext.traceId must be 32 lowercase hex digits, not all zero");
  }
  if (typeof context.spanId !== "string" || !SPAN_ID.test(context.spanId)) {
    throw invalid("traceContext", "traceContext.spanId must be 16 lowercase hex digits, not all zero");
  }
  const flags = context.traceFlags;
  if (flags !== undefined && (!Number.isInteger(flags) || flags < 0 || flags > 255)) {
    throw invalid("traceContext", "traceContext.traceFlags must be an integer from 0 to 255");
  }
  return { traceId: context.traceId, spanId: context.spanId, traceFlags: flags ?? 0 };
}

/** The step policies a caller picks. */
export type StepPolicy = "external" | "atMostOnce" | "transactional";

export const DB_POLICY: Record<StepPolicy, DbPolicy> = {
  external: "external",
  atMostOnce: "at_most_once",
  transactional: "transactional",
};

const invalid = (field: string, message: string) => new InvalidEffectInputError(message, { field });

/** Refuses anything but a plain object (or, where allowed, undefined) for `field`. */
export function checkObject(value: unknown, field: string, optional = false): void {
  if (optional && value === undefined) return;
  if (value === null || typeof value !== "object")
    throw invalid(field, `${field} must be an object; got ${value === null ? "null" : typeof value}`);
}

/** Refuses anything but a function for `field`. */
export function checkFunction(value: unknown, field: string): void {
  if (typeof value !== "function")
    throw invalid(field, `${field} must be a function; got ${value === null ? "null" : typeof value}`);
}

function toPublishedAt(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  const date =
    value instanceof Date
      ? value
      : typeof value === "string" || typeof value === "number"
        ? new Date(value)
        : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) {
    throw invalid("publishedAt", `publishedAt must be a Date, an ISO string or epoch milliseconds; got ${String(value)}`);
  }
  return date;
}

/** The delivery's metadata, validated (each bad field is an InvalidEffectInputError naming it). */
export function checkDelivery(delivery: Delivery & { jobType?: unknown }): {
  jobType: string;
  messageId: string | null;
  attempt: number | null;
  publishedAt: Date | null;
  redelivered: boolean;
  traceContext: TraceContext | null;
} {
  const jobType = validateJobType(delivery.jobType);
  const { messageId, attempt, redelivered } = delivery;
  if (messageId !== undefined && messageId !== null && (typeof messageId !== "string" || messageId.length > 1000)) {
    throw invalid("messageId", "messageId must be a string of at most 1000 characters, or null");
  }
  if (attempt !== undefined && attempt !== null && (!Number.isSafeInteger(attempt) || attempt < 0)) {
    throw invalid("attempt", `attempt must be a whole number from 0 (the broker's delivery count); got ${String(attempt)}`);
  }
  if (redelivered !== undefined && typeof redelivered !== "boolean")
    throw invalid("redelivered", "redelivered must be a boolean");
  return {
    jobType,
    messageId: messageId ?? null,
    attempt: attempt ?? null,
    publishedAt: toPublishedAt(delivery.publishedAt),
    redelivered: redelivered ?? (attempt ?? 1) > 1,
    traceContext: checkTraceContext(delivery.traceContext),
  };
}

/**
 * The one place a step's spec is built (once, every job step, effects.claim): validates tenant,
 * key, policy, lease, wait and the payload's fingerprint, and throws the typed error naming the
 * field at fault. Nothing is written before this returns.
 */
export function buildStepSpec(
  core: EffectsCore,
  delivery: ReturnType<typeof checkDelivery>,
  input: { tenant: unknown; key: unknown; policy?: unknown; payload?: unknown; lease?: unknown; wait?: unknown; tx?: unknown },
): StepSpec {
  const tenant = validateTenant(input.tenant);
  const key = validateKey(input.key);
  let policy: DbPolicy = "once";
  if (input.policy !== undefined) {
    if (typeof input.policy !== "string" || !Object.hasOwn(DB_POLICY, input.policy)) {
      throw invalid("policy", `policy must be one of ${Object.keys(DB_POLICY).join(", ")}; got ${String(input.policy)}`);
    }
    policy = DB_POLICY[input.policy as StepPolicy];
  }
  // A function too: postgres.js's transaction `sql` is a tagged template function.
  if (input.tx !== undefined && input.tx !== null && typeof input.tx !== "object" && typeof input.tx !== "function") {
    throw invalid(
      "tx",
      "tx must be the open transaction (a pg client after BEGIN, Prisma's transaction client, or the transaction of Drizzle, Kysely or postgres.js)",
    );
  }
  return {
    tenant,
    key,
    jobType: delivery.jobType,
    policy,
    messageId: delivery.messageId,
    deliveryAttempt: delivery.attempt,
    redelivered: delivery.redelivered,
    publishedAt: delivery.publishedAt,
    requestHash: requestHash(input.payload),
    leaseMs: input.lease === undefined ? core.opts.leaseMs : leaseMsOf(input.lease),
    waitMs: input.wait === undefined ? core.opts.waitMs : waitMsOf(input.wait),
    tx: (input.tx ?? undefined) as TransactionHandle | undefined,
    traceContext: delivery.traceContext,
  };
}
