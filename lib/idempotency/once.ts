import type { Claim } from "./claim";
import type { DbPolicy } from "./claim-sql";
import type { EffectsCore } from "./core";
import type { TransactionHandle } from "./db";
import { countDelivery, type Delivery, toPublishedAt } from "./delivery";
import { type Duration, toMs } from "./duration";
import { type EffectResult, runStep } from "./step";

/** The step policies a caller picks. */
export type StepPolicy = "external" | "atMostOnce" | "transactional";

export const DB_POLICY: Record<StepPolicy, DbPolicy> = {
  external: "external",
  atMostOnce: "at_most_once",
  transactional: "transactional",
};

export interface OnceInput<Tx = TransactionHandle> extends Delivery {
  tenant: string;
  /** `<step>:<business fact>`, e.g. `capture:order-123`. Never the message id. */
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
  /** transactional only: the caller's open READ COMMITTED transaction (pg PoolClient after BEGIN, or Prisma tx). */
  tx?: Tx;
}

export function once<T, Tx>(
  core: EffectsCore,
  input: OnceInput<Tx>,
  fn: (claim: Claim, tx: Tx | undefined) => T | Promise<T>,
): Promise<EffectResult<Awaited<T>>> {
  countDelivery(core, input.jobType, input);
  return runStep<Awaited<T>>(
    core,
    {
      tenant: input.tenant,
      key: input.key,
      jobType: input.jobType,
      policy: input.policy ? DB_POLICY[input.policy] : "once",
      messageId: input.messageId ?? null,
      deliveryAttempt: input.attempt ?? null,
      publishedAt: toPublishedAt(input.publishedAt),
      payload: input.payload,
      leaseMs: input.lease === undefined ? core.opts.leaseMs : toMs(input.lease, "lease"),
      waitMs: input.wait === undefined ? core.opts.waitMs : toMs(input.wait, "wait"),
      tx: input.tx as TransactionHandle | undefined,
    },
    (claim, tx) => fn(claim, tx as Tx | undefined),
  );
}
