import { randomUUID } from "node:crypto";
import type pg from "pg";
import { toMs } from "../duration";
import { classifyError, createEffects, type Duration, defaultLogger, type Effects, type EffectsOptions } from "../index";
import { createRegistry } from "../metrics";
import { diffSnapshots, normalizeSnapshot } from "./diff";
import { type KitDatabase, kitDatabase } from "./kit-database";
import {
  BOUNDARIES,
  BOUNDARY_MEANING,
  type Boundary,
  type CrashPoint,
  DeliveryRecorder,
  instrumentEffects,
  type StepCall,
} from "./observe-steps";

/** What the kit tells the handler about the delivery it is processing (pass it on to effects.job / once). */
export interface KitDelivery {
  messageId: string;
  attempt: number;
  redelivered: boolean;
  publishedAt: Date;
}

/**
 * The second argument of the handler under test. `Db` is the pool's type: a pg.Pool, or for a
 * mysql:// databaseUrl a mysql2/promise Pool (name it: `checkIdempotent<Message, Pool>(…)`).
 */
export interface HandlerContext<Db = pg.Pool> {
  /** This delivery's own pool: concurrent deliveries never share a connection, as separate workers would not. */
  db: Db;
  /** createEffects on `db`; every step of effects.job / effects.once is observed (and crashed) by the kit. */
  effects: Effects<Db extends pg.Pool ? pg.PoolClient : Db extends { getConnection(): Promise<infer C> } ? C : unknown>;
  delivery: KitDelivery;
}

export type ScenarioKind = "once" | "twice" | "concurrent" | "republished" | "crash";

export interface CheckIdempotentOptions<M, Db = pg.Pool> {
  /**
   * The database the handler works on: your real schema (a test database), not production. A
   * postgresql:// URL, or mysql:// (mariadb://) for MySQL and MariaDB, where `effects.schema` names
   * the database the library was migrated into (default `onceboard`).
   */
  databaseUrl: string;
  /** Your handler: use `ctx.db` and `ctx.effects`, and pass `ctx.delivery` to effects.job / once. */
  handler: (message: M, ctx: HandlerContext<Db>) => unknown;
  message: M;
  /** The broker's message id of `message`. Default: a random one. */
  messageId?: string;
  /**
   * How a producer re-publishes the same business fact under a new message id (when your message
   * body carries its id). Default: the same body; only `ctx.delivery.messageId` changes.
   */
  republish?: (message: M, newMessageId: string) => M;
  /** Resets your state before each scenario (the kit removes the effect rows it created itself). */
  setup: (db: Db) => unknown;
  /**
   * The state that must not change when the message is applied again: rows of your tables, calls
   * recorded by a fake provider. Leave out what legitimately differs per run (generated ids,
   * timestamps, the message id). Compared as JSON.
   */
  observe: (db: Db) => unknown;
  /** Deliveries of the same message at once in the concurrent scenario. Default 5. */
  concurrency?: number;
  /** Which scenarios to run (the reference, "once", always runs). Default all. */
  scenarios?: Exclude<ScenarioKind, "once">[];
  /** The lease of a delivery that will crash: its redelivery takes the claim over once it expires. Default "250ms". */
  crashLease?: Duration;
  /** Options for each delivery's createEffects (wait, lease, logger, …). Default: silent logger, no rollups. */
  effects?: Partial<Omit<EffectsOptions, "db" | "registry">>;
  /** Deliveries the simulated broker makes of one message while the handler throws. Default 5. */
  maxAttempts?: number;
  /** A delivery still running after this long counts as failed. Default "60s". */
  deliveryTimeout?: Duration;
  /** Connections per delivery's pool. Default 4. */
  poolSize?: number;
  /** Fail a crash scenario whose state differs because an at-most-once step was abandoned. Default false (that loss is the policy's promise). */
  strictAtMostOnce?: boolean;
}

/** Per step, what one scenario's deliveries did. */
export interface StepCount {
  /** The effect key, with the message id shown as `{messageId}` and ` #2` for a key's second use in one delivery. */
  step: string;
  policy: StepCall["policy"];
  /** How many times the step's body ran to completion, over all deliveries of the scenario. */
  executions: number;
  /** The same in the reference run. */
  reference: number;
  /** What the library answered to each call of the step. */
  results: { ran: number; duplicate: number; abandoned: number };
}

export interface ScenarioReport {
  kind: ScenarioKind;
  /** e.g. "twice", "concurrent", "crash at capture:o-1 (ran)". */
  name: string;
  description: string;
  /** The crash injected into the first delivery (crash scenarios only). */
  crash?: CrashPoint & { policy: StepCall["policy"] };
  /** No state difference and no step repeated or missing (see `abandoned`). */
  ok: boolean;
  /** The snapshot equals the reference (for "once": true). */
  equal: boolean;
  /** One line per difference, `path: reference → this scenario`. */
  diff: string[];
  snapshot: unknown;
  steps: StepCount[];
  /** Steps whose body ran more often than in the reference (beyond what the crash explains). */
  repeated: string[];
  /** Steps whose body ran less often than in the reference, or never ran in the reference. */
  missing: string[];
  /** At-most-once steps abandoned after the crash: never twice, possibly never (by design). */
  abandoned: string[];
  /** Deliveries that still failed after the simulated broker's retries. */
  errors: string[];
  /** Attempts that failed and were redelivered, crashes, and other facts worth reading. */
  notes: string[];
}

export interface IdempotencyReport {
  ok: boolean;
  /** The observe() snapshot after one delivery. */
  reference: unknown;
  /** The steps of the reference run, in order. */
  steps: { step: string; policy: StepCall["policy"] }[];
  /** "once" first, then each scenario. */
  scenarios: ScenarioReport[];
  /** Things the kit noticed that are not a failure by themselves (e.g. a key built from the message id). */
  warnings: string[];
}

interface DeliveryOutcome {
  recorders: DeliveryRecorder[];
  error?: string;
  notes: string[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`;
  return String(error);
}

class Harness<M, Db> {
  private readonly touched = new Map<string, Set<string>>();
  private readonly logger;
  private readonly crashLeaseMs: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly o: CheckIdempotentOptions<M, Db>,
    /** The database's side of the kit, PostgreSQL's or MySQL's (kit-database.ts). */
    readonly database: KitDatabase,
  ) {
    this.logger = o.effects?.logger ?? defaultLogger("onceboard-kit", "silent");
    this.crashLeaseMs = toMs(o.crashLease ?? "250ms", "crashLease");
    this.timeoutMs = toMs(o.deliveryTimeout ?? "60s", "deliveryTimeout");
  }

  /** The pool setup() and observe() get. */
  get control(): Db {
    return this.database.control as Db;
  }

  /** Deletes the effect rows the kit's deliveries created, so the next scenario starts clean. */
  async forgetEffects(): Promise<void> {
    for (const [tenant, keys] of this.touched) await this.database.forgetEffects(tenant, [...keys], this.o.effects?.schema);
    this.touched.clear();
  }

  private remember(rec: DeliveryRecorder): void {
    for (const call of rec.calls) {
      const keys = this.touched.get(call.tenant) ?? new Set<string>();
      this.touched.set(call.tenant, keys);
      keys.add(call.key);
    }
  }

  /**
   * One delivery attempt, prepared (pool open, one connection warm) so that concurrent attempts
   * really start together; `start()` runs the handler.
   */
  async prepare(
    message: M,
    delivery: KitDelivery,
    crashAt: CrashPoint | null,
  ): Promise<{ rec: DeliveryRecorder; start: () => Promise<{ kind: "ok" | "crashed" | "error"; error?: unknown }> }> {
    const rec = new DeliveryRecorder(delivery.messageId, crashAt, crashAt ? this.crashLeaseMs : undefined);
    const delivered = await this.database.deliveryPool(this.o.poolSize ?? 4);
    const { pool } = delivered;
    await delivered.warm();
    const real = createEffects({
      wait: "10s",
      ...this.o.effects,
      ...(crashAt ? { lease: this.crashLeaseMs } : {}),
      db: pool,
      registry: createRegistry(),
      logger: this.logger,
      rollups: false,
      flushInterval: 0,
      // One delivery of a test, not a worker of the fleet: it registers nothing and keeps the
      // retention it was given.
      register: false,
    });
    const ctx = { db: pool, effects: instrumentEffects(real, rec), delivery } as unknown as HandlerContext<Db>;
    const start = async (): Promise<{ kind: "ok" | "crashed" | "error"; error?: unknown }> => {
      const crashed = new Promise<{ kind: "crashed" }>((resolve) => {
        rec.onCrash = () => resolve({ kind: "crashed" });
      });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<{ kind: "timeout" }>((resolve) => {
        timer = setTimeout(() => resolve({ kind: "timeout" }), this.timeoutMs);
      });
      const work = (async () => this.o.handler(message, ctx))().then(
        () => ({ kind: "ok" as const }),
        (error: unknown) => ({ kind: "error" as const, error }),
      );
      const result = await Promise.race([work, crashed, timedOut]);
      clearTimeout(timer);
      this.remember(rec);
      if (result.kind === "crashed" || result.kind === "timeout") {
        // A dead worker: no close(), no flush, no release. Its connections die with the process,
        // rolling back an open transaction; an external or at-most-once claim stays in progress
        // until its lease expires. Anything the handler still tries afterwards never settles.
        rec.crashed = true;
        await delivered.kill();
        void delivered.end().catch(() => {});
        if (result.kind === "crashed") return result;
        return { kind: "error", error: new Error(`the handler was still running after ${this.timeoutMs} ms`) };
      }
      await real.close().catch(() => {});
      await delivered.end().catch(() => {});
      return result;
    };
    return { rec, start };
  }

  /**
   * One message as a broker delivers it: redelivered (attempt + 1) after a crash or a handler
   * error, up to maxAttempts; an in-flight answer is redelivered after its retryAfterMs.
   */
  async deliver(
    message: M,
    messageId: string,
    crashAt: CrashPoint | null,
    first?: Awaited<ReturnType<Harness<M, Db>["prepare"]>>,
  ) {
    const outcome: DeliveryOutcome = { recorders: [], notes: [] };
    const maxAttempts = this.o.maxAttempts ?? 5;
    const publishedAt = new Date();
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const prepared =
        attempt === 1 && first
          ? first
          : await this.prepare(
              message,
              { messageId, attempt, redelivered: attempt > 1, publishedAt },
              attempt === 1 ? crashAt : null,
            );
      outcome.recorders.push(prepared.rec);
      const result = await prepared.start();
      if (result.kind === "ok") {
        if (attempt === 1 && crashAt && !prepared.rec.crashed) {
          outcome.error = `message ${messageId}: the crash point ${crashAt.step} (${crashAt.at}) was never reached: this delivery took another path than the reference`;
        }
        return outcome;
      }
      if (result.kind === "crashed") {
        outcome.notes.push(`message ${messageId} attempt ${attempt}: crashed ${describeCrash(crashAt)}; redelivered`);
        continue;
      }
      const text = errorText(result.error);
      const kind = classifyError(result.error);
      if (kind.kind === "key_reuse" || (kind.kind === "library" && kind.disposition === "dead-letter")) {
        outcome.error = `message ${messageId} attempt ${attempt}: ${text} (dead-lettered)`;
        return outcome;
      }
      if (attempt === maxAttempts) {
        outcome.error = `message ${messageId}: still failing after ${maxAttempts} attempts: ${text}`;
        return outcome;
      }
      outcome.notes.push(`message ${messageId} attempt ${attempt} failed (${text}); redelivered`);
      await sleep(kind.kind === "in_flight" ? Math.min(Math.max(kind.retryAfterMs, 10), 1000) : 50);
    }
    return outcome;
  }
}

function describeCrash(crash: CrashPoint | null): string {
  return crash ? `at ${crash.step}, ${BOUNDARY_MEANING[crash.at]}` : "";
}

function countSteps(recorders: DeliveryRecorder[]): Map<string, Omit<StepCount, "reference">> {
  const counts = new Map<string, Omit<StepCount, "reference">>();
  for (const rec of recorders) {
    for (const call of rec.calls) {
      let c = counts.get(call.step);
      if (!c) {
        c = { step: call.step, policy: call.policy, executions: 0, results: { ran: 0, duplicate: 0, abandoned: 0 } };
        counts.set(call.step, c);
      }
      if (call.executed) c.executions++;
      if (call.result) c.results[call.result]++;
    }
  }
  return counts;
}

/**
 * Runs `handler` against your real database: once (the reference), twice in a row, N times at
 * once, re-published under a new message id, and with a crash at each step boundary followed by
 * the redelivery. Returns a report; never throws for a handler that is merely not idempotent
 * (use assertIdempotent for that). Throws when the reference delivery itself fails.
 */
export async function checkIdempotent<M, Db = pg.Pool>(options: CheckIdempotentOptions<M, Db>): Promise<IdempotencyReport> {
  const h = new Harness(options, await kitDatabase(options.databaseUrl));
  const wanted = new Set(options.scenarios ?? ["twice", "concurrent", "republished", "crash"]);
  const concurrency = Math.max(2, options.concurrency ?? 5);
  const messageId = options.messageId ?? `kit-${randomUUID()}`;
  const republish = options.republish ?? ((m: M) => m);
  const scenarios: ScenarioReport[] = [];
  const warnings: string[] = [];

  try {
    // The reference: one delivery into a freshly set-up state.
    await options.setup(h.control);
    const refDelivery = await h.deliver(options.message, messageId, null);
    if (refDelivery.error || refDelivery.recorders.length > 1) {
      throw new Error(
        `checkIdempotent: the reference delivery (once, no faults) failed, so there is nothing to compare with: ${
          refDelivery.error ?? refDelivery.notes.join("; ")
        }`,
      );
    }
    const reference = normalizeSnapshot(await options.observe(h.control));
    await h.forgetEffects();
    const refRec = refDelivery.recorders[0]!;
    const refCounts = countSteps([refRec]);
    const refSteps = [...refCounts.values()].map((c) => ({ step: c.step, policy: c.policy }));

    const refMissing: string[] = [];
    const seenKeys = new Set<string>();
    for (const call of refRec.calls) {
      const id = `${call.tenant}\u0001${call.key}`;
      if (seenKeys.has(id) && !call.executed) {
        refMissing.push(
          `${call.step}: never ran — it shares the key ${call.key} with an earlier step of the same delivery, so the library took it for a duplicate of that step. Give each effect its own key.`,
        );
      } else if (!call.executed) {
        refMissing.push(
          `${call.step}: never ran on the first delivery (the library answered "${call.result ?? "nothing"}"): its key was already claimed. Two effects share one key, or setup() left state behind.`,
        );
      }
      seenKeys.add(id);
    }
    const onMessageId = refRec.calls.filter((c) => messageId.length >= 4 && c.key.includes(messageId)).map((c) => c.step);
    if (onMessageId.length > 0) {
      warnings.push(
        `${onMessageId.join(", ")} ${onMessageId.length === 1 ? "is" : "are"} keyed on the broker's message id: a re-published message gets a new id and runs ${onMessageId.length === 1 ? "it" : "them"} again. Key on the business fact.`,
      );
    }
    if (refRec.calls.length === 0) {
      warnings.push(
        "the handler ran no step through ctx.effects (effects.job / effects.once): the kit sees no step boundaries, so no crash scenario ran and only the observed state is compared",
      );
    }
    scenarios.push({
      kind: "once",
      name: "once",
      description: "one delivery: the reference state",
      ok: refMissing.length === 0,
      equal: true,
      diff: [],
      snapshot: reference,
      steps: [...refCounts.values()].map((c) => ({ ...c, reference: c.executions })),
      repeated: [],
      missing: refMissing,
      abandoned: [],
      errors: [],
      notes: [],
    });

    const run = async (
      kind: ScenarioKind,
      name: string,
      description: string,
      deliveries: () => Promise<DeliveryOutcome[]>,
      crash?: ScenarioReport["crash"],
    ) => {
      await options.setup(h.control);
      const outcomes = await deliveries();
      const snapshot = normalizeSnapshot(await options.observe(h.control));
      await h.forgetEffects();
      const counts = countSteps(outcomes.flatMap((o) => o.recorders));
      const repeated: string[] = [];
      const missing: string[] = [];
      const abandoned: string[] = [];
      const steps: StepCount[] = [];
      for (const step of new Set([...refCounts.keys(), ...counts.keys()])) {
        const ref = refCounts.get(step);
        const got = counts.get(step);
        const want = ref?.executions ?? 0;
        const executions = got?.executions ?? 0;
        const policy = (got ?? ref)!.policy;
        steps.push({
          step,
          policy,
          executions,
          reference: want,
          results: got?.results ?? { ran: 0, duplicate: 0, abandoned: 0 },
        });
        // A crash after the body ran: a redo is the policy (external: same provider key; the
        // transaction rolled back). The state says whether the redo was harmless.
        const allowance = crash && crash.step === step && crash.at === "ran" && policy !== "atMostOnce" ? 1 : 0;
        if (!ref) {
          repeated.push(`${step}: ran ${executions}× but is not a step of the reference run (is its key stable?)`);
        } else if (executions > want + allowance) {
          repeated.push(`${step}: ran ${executions}× (reference ${want}×)`);
        }
        if ((got?.results.abandoned ?? 0) > 0) {
          abandoned.push(`${step}: abandoned after the crash (at most once: never twice, possibly never)`);
        } else if (executions < want) {
          missing.push(`${step}: ran ${executions}× (reference ${want}×)`);
        }
      }
      const diff = diffSnapshots(reference, snapshot);
      const errors = outcomes.flatMap((o) => (o.error ? [o.error] : []));
      const equal = diff.length === 0;
      const ok =
        errors.length === 0 &&
        repeated.length === 0 &&
        missing.length === 0 &&
        (equal || (abandoned.length > 0 && !options.strictAtMostOnce));
      scenarios.push({
        kind,
        name,
        description,
        ...(crash ? { crash } : {}),
        ok,
        equal,
        diff,
        snapshot,
        steps,
        repeated,
        missing,
        abandoned,
        errors,
        notes: outcomes.flatMap((o) => o.notes),
      });
    };

    if (wanted.has("twice")) {
      await run("twice", "twice", "the same message delivered twice in a row (same message id)", async () => [
        await h.deliver(options.message, messageId, null),
        await h.deliver(options.message, messageId, null),
      ]);
    }
    if (wanted.has("concurrent")) {
      await run(
        "concurrent",
        "concurrent",
        `the same message delivered ${concurrency} times at once (same message id, separate connections)`,
        async () => {
          const publishedAt = new Date();
          const prepared = await Promise.all(
            Array.from({ length: concurrency }, () =>
              h.prepare(options.message, { messageId, attempt: 1, redelivered: false, publishedAt }, null),
            ),
          );
          return Promise.all(prepared.map((p) => h.deliver(options.message, messageId, null, p)));
        },
      );
    }
    if (wanted.has("republished")) {
      const newId = `${messageId}-republished`;
      await run("republished", "republished", "the same business fact published again under a new message id", async () => [
        await h.deliver(options.message, messageId, null),
        await h.deliver(republish(options.message, newId), newId, null),
      ]);
    }
    if (wanted.has("crash")) {
      for (const { step, policy } of refSteps) {
        const ran = (refCounts.get(step)?.executions ?? 0) > 0;
        const boundaries: Boundary[] = ran ? [...BOUNDARIES] : ["done"];
        for (const at of boundaries) {
          const crash = { step, at, policy };
          await run(
            "crash",
            `crash at ${step} (${at})`,
            `the worker dies at ${step}, ${BOUNDARY_MEANING[at]}; the lease expires, the message is redelivered`,
            async () => [await h.deliver(options.message, messageId, crash)],
            crash,
          );
        }
      }
    }

    return {
      ok: scenarios.every((s) => s.ok),
      reference,
      steps: refSteps,
      scenarios,
      warnings: [...new Set(warnings)],
    };
  } finally {
    await h.forgetEffects().catch(() => {});
    await h.database.end().catch(() => {});
  }
}
