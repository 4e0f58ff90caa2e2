import type { Claim, Duration, Effects, JobContext, OnceInput, StepPolicy, StepReport } from "../index";

/** Where around a step the kit can crash a delivery. */
export type Boundary = "claimed" | "ran" | "done";
export const BOUNDARIES: readonly Boundary[] = ["claimed", "ran", "done"];

export const BOUNDARY_MEANING: Record<Boundary, string> = {
  claimed: "after the claim, before its body ran",
  ran: "after its body returned, before the claim was completed",
  done: "after it completed, before the handler went on",
};

export interface CrashPoint {
  /** The step's identity (see DeliveryRecorder.identify). */
  step: string;
  at: Boundary;
}

/** One step call made by one delivery, through the instrumented effects. */
export interface StepCall {
  /** The key with the delivery's message id replaced by `{messageId}`, plus ` #n` for the nth use of one key. */
  step: string;
  tenant: string;
  key: string;
  policy: StepPolicy | "once";
  /** True when the step's body ran to completion in this delivery. */
  executed: boolean;
  /** What the library reported; undefined when the call threw or the delivery crashed first. */
  result?: StepReport["result"];
}

/** A promise that never settles: what the rest of a killed process's work turns into. */
export function hang(): Promise<never> {
  return new Promise<never>(() => {});
}

/**
 * Everything one delivery did through the instrumented effects, and the crash it carries (if any).
 * When the crash point is reached the delivery is dead: `onCrash` tells the driver (which kills the
 * delivery's database connections, as the death of the process would), and every promise the
 * handler is waiting on, and any step it starts afterwards, never settles — nothing after the
 * boundary runs, and the library never gets to complete or release the claim.
 */
export class DeliveryRecorder {
  readonly calls: StepCall[] = [];
  crashed = false;
  onCrash: () => void = () => {};
  private readonly uses = new Map<string, number>();

  constructor(
    readonly messageId: string,
    readonly crashAt: CrashPoint | null,
    /** Lease forced on every step of a delivery that will crash, so its retry need not wait long. */
    readonly leaseOverride: Duration | undefined,
  ) {}

  /** Stable across deliveries: the message id becomes `{messageId}` so a re-published copy maps onto the same step. */
  identify(tenant: string, key: string): string {
    const id = `${tenant}\u0001${key}`;
    const n = (this.uses.get(id) ?? 0) + 1;
    this.uses.set(id, n);
    const base = this.messageId.length >= 4 ? key.split(this.messageId).join("{messageId}") : key;
    return n > 1 ? `${base} #${n}` : base;
  }

  async boundary(step: string, at: Boundary): Promise<void> {
    if (this.crashed) return hang();
    if (this.crashAt && this.crashAt.step === step && this.crashAt.at === at) {
      this.crashed = true;
      this.onCrash();
      return hang();
    }
  }

  /** Runs one step call through `invoke`, wrapping the step's body to observe it and to crash at its boundaries. */
  async observe<R>(
    tenant: string,
    key: string,
    policy: StepCall["policy"],
    invoke: (
      lease: Duration | undefined,
      wrap: <A extends unknown[], T>(fn: (...args: A) => T) => (...args: A) => Promise<Awaited<T>>,
    ) => Promise<R>,
    resultOf: (value: R) => StepCall["result"],
  ): Promise<R> {
    if (this.crashed) return hang();
    const call: StepCall = { step: this.identify(tenant, key), tenant, key, policy, executed: false };
    this.calls.push(call);
    const wrap =
      <A extends unknown[], T>(fn: (...args: A) => T) =>
      async (...args: A): Promise<Awaited<T>> => {
        await this.boundary(call.step, "claimed");
        const value = await fn(...args);
        call.executed = true;
        await this.boundary(call.step, "ran");
        return value;
      };
    const value = await invoke(this.leaseOverride, wrap);
    call.result = resultOf(value);
    await this.boundary(call.step, "done");
    return value;
  }
}

function lastReport(job: JobContext<unknown>, key: string): StepReport["result"] | undefined {
  for (let i = job.steps.length - 1; i >= 0; i--) if (job.steps[i]?.key === key) return job.steps[i]?.result;
  return undefined;
}

function withLease<O extends { lease?: Duration }>(options: O | undefined, lease: Duration | undefined): O | undefined {
  return lease === undefined ? options : ({ ...(options ?? {}), lease } as O);
}

/** The job context the handler sees: the real one, with each step observed. */
export function instrumentJob<Tx>(job: JobContext<Tx>, rec: DeliveryRecorder): JobContext<Tx> {
  const untyped = job as JobContext<unknown>;
  return {
    get tenant() {
      return job.tenant;
    },
    get jobType() {
      return job.jobType;
    },
    get messageId() {
      return job.messageId;
    },
    get attempt() {
      return job.attempt;
    },
    get steps() {
      return job.steps;
    },
    external: (key, fn, options) =>
      rec.observe(
        job.tenant,
        key,
        "external",
        (lease, wrap) => job.external(key, wrap(fn), withLease(options, lease)),
        () => lastReport(untyped, key),
      ),
    transaction: (key, fn, options) =>
      rec.observe(
        job.tenant,
        key,
        "transactional",
        (lease, wrap) => job.transaction(key, wrap(fn), withLease(options, lease)),
        () => lastReport(untyped, key),
      ),
    atMostOnce: (key, fn, options) =>
      rec.observe(
        job.tenant,
        key,
        "atMostOnce",
        (lease, wrap) => job.atMostOnce(key, wrap(fn), withLease(options, lease)),
        () => lastReport(untyped, key),
      ),
  };
}

/**
 * The effects the handler gets: `once` and every step of `job` are observed (and crashable).
 * `claim()` (the low-level form) passes through unobserved.
 */
export function instrumentEffects<Tx>(effects: Effects<Tx>, rec: DeliveryRecorder): Effects<Tx> {
  return {
    ...effects,
    once: (input, fn) =>
      rec.observe(
        input.tenant,
        input.key,
        input.policy ?? "once",
        (lease, wrap) =>
          effects.once(
            (lease === undefined ? input : { ...input, lease }) as unknown as OnceInput<Tx>,
            wrap(fn as (claim: Claim, tx: Tx | undefined) => unknown),
          ),
        (value) => value.result,
      ) as never,
    job: (delivery, handler) =>
      rec.crashed ? hang() : effects.job(delivery, (job) => (rec.crashed ? hang() : handler(instrumentJob(job, rec)))),
  };
}
