import type { Claim } from "./claim";
import type { EffectsCore } from "./core";
import type { TransactionHandle } from "./db";
import { countDelivery, type Delivery } from "./delivery";
import type { Duration } from "./duration";
import { InvalidEffectKeyError } from "./errors";
import { validateTenant } from "./keys";
import { buildStepSpec, checkDelivery, checkFunction, checkObject, type StepPolicy } from "./spec";
import { type EffectResult, runStep } from "./step";

export interface JobDelivery extends Delivery {
  tenant: string;
  jobType: string;
}

export interface StepOptions {
  /** Hashed to catch the key reused with different data. */
  payload?: unknown;
  lease?: Duration;
  wait?: Duration;
}

export interface TransactionStepOptions<Tx> extends StepOptions {
  /** Join this open transaction instead of opening one. */
  tx?: Tx;
}

export interface StepReport {
  key: string;
  policy: StepPolicy;
  result: EffectResult<unknown>["result"];
  attempt: number;
  resumed: boolean;
}

export interface JobContext<Tx> {
  readonly tenant: string;
  readonly jobType: string;
  readonly messageId: string | null;
  readonly attempt: number | null;
  /** The steps run so far in this delivery. */
  readonly steps: readonly StepReport[];
  /**
   * A call to another system that honours an idempotency key. After a crash it is redone with the
   * same claim.providerKey, so the provider deduplicates. Returns the outcome (stored on duplicates).
   */
  external<T>(key: string, fn: (claim: Claim) => T | Promise<T>, options?: StepOptions): Promise<Awaited<T>>;
  /**
   * Database writes that commit or roll back together with the claim: `fn` gets the transaction
   * the library opened on `db` (pg PoolClient, or the Prisma interactive-transaction client), or
   * the caller's own `options.tx`, as it was passed: a pg client after BEGIN, Prisma's, Drizzle's,
   * Kysely's or postgres.js's transaction object.
   */
  transaction<T, X = Tx>(
    key: string,
    fn: (tx: X, claim: Claim) => T | Promise<T>,
    options?: TransactionStepOptions<X>,
  ): Promise<Awaited<T>>;
  /**
   * A call that cannot be made idempotent (an email). If a worker dies after claiming it, the
   * retry marks it abandoned and skips it: never twice, possibly never. Returns undefined then.
   */
  atMostOnce<T>(key: string, fn: (claim: Claim) => T | Promise<T>, options?: StepOptions): Promise<Awaited<T> | undefined>;
}

export interface JobResult<R> {
  /** What the handler returned. */
  value: R;
  steps: StepReport[];
  /** True when at least one step ran before and none ran now: a pure duplicate delivery. */
  duplicate: boolean;
}

/**
 * A job with several effects, each under its own key: a retry resumes at the first step not yet
 * done, completed steps return their stored outcomes.
 */
export async function job<R, Tx>(
  core: EffectsCore,
  delivery: JobDelivery,
  handler: (job: JobContext<Tx>) => R | Promise<R>,
): Promise<JobResult<Awaited<R>>> {
  checkObject(delivery, "delivery");
  checkFunction(handler, "handler");
  const meta = checkDelivery(delivery);
  validateTenant(delivery.tenant);
  countDelivery(core, meta.jobType, meta.redelivered);
  const steps: StepReport[] = [];
  const used = new Set<string>();

  async function step<T>(
    policy: StepPolicy,
    key: string,
    fn: (claim: Claim, tx: TransactionHandle | undefined) => T | Promise<T>,
    options: TransactionStepOptions<unknown> = {},
  ): Promise<EffectResult<Awaited<T>>> {
    checkObject(options, "options", true);
    const spec = buildStepSpec(core, meta, { ...(options ?? {}), tenant: delivery.tenant, key, policy });
    if (used.has(key)) {
      throw new InvalidEffectKeyError(`effect key ${key} is used by two steps of one job: give each effect its own key`, {
        field: "key",
      });
    }
    used.add(key);
    const result = await runStep<Awaited<T>>(core, spec, fn);
    steps.push({ key, policy, result: result.result, attempt: result.attempt, resumed: result.resumed });
    return result;
  }
  // A step's own fn is checked in the promise, so a bad one is a rejection like every other bad input.
  const checked = <F>(fn: F): F => {
    checkFunction(fn, "fn");
    return fn;
  };

  const context: JobContext<Tx> = {
    tenant: delivery.tenant,
    jobType: delivery.jobType,
    messageId: delivery.messageId ?? null,
    attempt: delivery.attempt ?? null,
    steps,
    external: async (key, fn, options) => {
      const run = checked(fn);
      return (await step("external", key, (claim) => run(claim), options)).outcome as never;
    },
    transaction: async (key, fn, options) => {
      const run = checked(fn);
      return (await step("transactional", key, (claim, tx) => run(tx as never, claim), options)).outcome as never;
    },
    atMostOnce: async (key, fn, options) => {
      const run = checked(fn);
      return (await step("atMostOnce", key, (claim) => run(claim), options)).outcome as never;
    },
  };
  const value = await handler(context);
  return { value, steps, duplicate: steps.length > 0 && steps.every((s) => s.result !== "ran") };
}
