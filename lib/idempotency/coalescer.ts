import { batchOf, type ClaimParams, type ClaimRow } from "./claim-sql";
import type { Sql } from "./db";
import { withRetry } from "./retryable";
import type { Completion, Release, Store } from "./store";

/**
 * Coalescing: the concurrent claims, completions and failures of one createEffects instance share
 * round trips. Pipeline style, with no timer: while a statement is in flight, the calls that arrive
 * queue; when it returns, everything queued (up to COALESCE_MAX_BATCH) goes in the next statement,
 * set-wise. A call that finds nothing in flight goes at the end of the current turn of the event
 * loop (a microtask, before any I/O or timer): the calls one event answered together (a statement's
 * return wakes a whole wave of callers) go together, where sending the first at once made every
 * wave a statement of one, then the rest. A lone call still goes as the very statement it would send
 * without coalescing and pays no added latency; under load one round trip carries many callers.
 *
 * Each caller gets exactly its own answer: the batch statements answer per key (onceboard_claim_batch
 * decides each key as onceboard_claim would; the batched completion and failure report which rows
 * were still the caller's). If a batch statement fails as a whole, its calls are sent again one by
 * one, each as it would have gone alone, so one key's failure (a lock wait past its timeout, say)
 * never becomes its neighbours'. Only statements the library runs in autocommit coalesce: a claim
 * inside a transaction (the caller's `tx`, or one the library opened for a transactional step)
 * belongs to that transaction and goes on its own.
 */
const COALESCE_MAX_BATCH = 256;
/**
 * Statements one lane keeps in flight at most. More than one, so that the database works on one
 * batch while the process answers the previous one's callers and gathers the next: with a single
 * statement in flight the two take turns and both sit idle half the time.
 */
const COALESCE_STATEMENTS_IN_FLIGHT = 4;
/**
 * Another statement joins those in flight only for at least this many queued calls: fewer wait for
 * the next return, where they go together, instead of each taking a statement (and a connection).
 */
export const COALESCE_WIDEN_AT = 8;

export interface Coalescer {
  /** A claim as the store answers it (raw database errors, as the store throws them). */
  claim(params: ClaimParams): Promise<ClaimRow>;
  /** A completion as the store answers it: false when the claim is no longer ours. */
  complete(completion: Completion): Promise<boolean>;
  /** A failure as the store answers it: false when the claim is no longer ours. */
  fail(release: Release): Promise<boolean>;
}

type Settled<O> = { ok: true; value: O } | { ok: false; error: unknown };

/**
 * One lane: at most `inFlight` statements in flight; calls queue while they are, and everything
 * queued goes together in the next statement as soon as one returns. `send` answers each item of a
 * batch on its own.
 */
export class Pipeline<I, O> {
  private queue: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  private running = 0;
  private sendQueuedAtEndOfTurn = false;

  constructor(
    private readonly send: (items: I[]) => Promise<Settled<O>[]>,
    private readonly maxBatch: number,
    private readonly counts: { statements: number; calls: number },
    private readonly inFlight = COALESCE_STATEMENTS_IN_FLIGHT,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.running < this.inFlight && this.queue.length >= COALESCE_WIDEN_AT) void this.drain();
      else if (this.running === 0 && !this.sendQueuedAtEndOfTurn) {
        this.sendQueuedAtEndOfTurn = true;
        queueMicrotask(() => {
          this.sendQueuedAtEndOfTurn = false;
          if (this.queue.length > 0 && this.running < this.inFlight) void this.drain();
        });
      }
    });
  }

  private async drain(): Promise<void> {
    this.running++;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        this.counts.statements++;
        this.counts.calls += batch.length;
        let answers: Settled<O>[];
        try {
          answers = await this.send(batch.map((b) => b.item));
        } catch (error) {
          answers = batch.map(() => ({ ok: false, error }));
        }
        for (const [k, waiter] of batch.entries()) {
          const answer = answers[k];
          if (answer?.ok) waiter.resolve(answer.value);
          else waiter.reject(answer ? answer.error : new Error("a coalesced statement gave no answer"));
        }
      }
    } finally {
      this.running--;
    }
  }
}

async function outcomeOf<O>(fn: () => Promise<O>): Promise<Settled<O>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * Sends a batch: one item as its own single statement; more set-wise. If the set-wise statement
 * fails as a whole, each item goes again alone (concurrently), so every item gets the answer or
 * the error it would have got by itself.
 */
async function sendBatch<I, O>(
  items: I[],
  single: (item: I) => Promise<O>,
  many: (items: I[]) => Promise<O[]>,
): Promise<Settled<O>[]> {
  if (items.length === 1) return [await outcomeOf(() => single(items[0] as I))];
  try {
    const values = await many(items);
    return values.map((value) => ({ ok: true, value }));
  } catch {
    return Promise.all(items.map((item) => outcomeOf(() => single(item))));
  }
}

/** The coalescer of one createEffects instance, sending to `store` through `sql` (autocommit, the library's own). */
export function createCoalescer(sql: Sql, store: Store, maxBatch = COALESCE_MAX_BATCH): Coalescer {
  // Statements sent and the calls they carried: kept for a debugger's eye, not exported.
  const counts = { statements: 0, calls: 0 };
  // A redelivery in a batch is decided by onceboard_claim inside the batch function, as alone; the
  // read-only CLAIM_REDELIVERY shortcut applies to a call that goes alone.
  // The batch claim takes one job type, policy, lease and marking: one lane per combination.
  const claimLanes = new Map<string, Pipeline<ClaimParams, ClaimRow>>();
  const claimLane = (p: ClaimParams) => {
    const id = `${p.jobType}\u0001${p.policy}\u0001${Math.round(p.leaseMs)}\u0001${p.marked}`;
    let lane = claimLanes.get(id);
    if (!lane) {
      lane = new Pipeline(
        (items) =>
          sendBatch(
            items,
            (p1) => withRetry(() => store.claim(sql, p1)),
            (many) => withRetry(() => store.claimBatch(sql, batchOf(many))),
          ),
        maxBatch,
        counts,
      );
      claimLanes.set(id, lane);
    }
    return lane;
  };

  const completions = new Pipeline<Completion, boolean>(
    (items) =>
      sendBatch(
        items,
        (c) => withRetry(() => store.complete(sql, c)),
        (many) => withRetry(() => store.completeBatch(sql, many)),
      ),
    maxBatch,
    counts,
  );
  const failures = new Pipeline<Release, boolean>(
    (items) =>
      sendBatch(
        items,
        (f) => withRetry(() => store.fail(sql, f)),
        (many) => withRetry(() => store.failBatch(sql, many)),
      ),
    maxBatch,
    counts,
  );

  return {
    claim: (params) => claimLane(params).submit(params),
    complete: (completion) => completions.submit(completion),
    fail: (release) => failures.submit(release),
  };
}
