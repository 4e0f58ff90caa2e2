import type { Claim } from "./claim";
import type { EffectsCore } from "./core";
import type { TransactionHandle } from "./db";
import { countDelivery, type Delivery } from "./delivery";
import type { Duration } from "./duration";
import { buildStepSpec, checkDelivery, checkFunction, checkObject, type StepPolicy } from "./spec";
import { type EffectResult, runStep } from "./step";

export { DB_POLICY, type StepPolicy } from "./spec";

export interface OnceInput<Tx = TransactionHandle> extends Delivery {
  tenant: string;
  /** `<step>:<business fact>`, e.g. `settle:invoice-123`. Never the message id. */
  key: string;
  jobType: string;
  /** Hashed (never stored) to catch the same key reused with different data. */
  payload?: unknown;
  /**
   * What a takeover after a crash does. Default (unset): redo the step, like "external".
   * "atMostOnce": mark abandoned and skip. "transactional": claim inside a transaction with the
   * step's writes (`tx` if given, else one the library opens).
   */
  policy?: StepPolicy;
  lease?: Duration;
  wait?: Duration;
  /**
   * transactional only: the caller's open READ COMMITTED transaction, which `fn` then gets: a pg
   * client after BEGIN, Prisma's transaction client, or Drizzle's, Kysely's or postgres.js's
   * transaction object.
   */
  tx?: Tx;
}

/** effects.once: every bad input is a rejected promise with a typed EffectsError naming the field. */
export async function once<T, Tx>(
  core: EffectsCore,
  input: OnceInput<Tx>,
  fn: (claim: Claim, tx: Tx | undefined) => T | Promise<T>,
): Promise<EffectResult<Awaited<T>>> {
  checkObject(input, "input");
  checkFunction(fn, "fn");
  const delivery = checkDelivery(input);
  const spec = buildStepSpec(core, delivery, input);
  countDelivery(core, delivery.jobType, delivery.redelivered);
  return runStep<Awaited<T>>(core, spec, (claim, tx) => fn(claim, tx as Tx | undefined));
}
