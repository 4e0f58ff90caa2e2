import type pg from "pg";
import { runLocked } from "../db/locked-run";
import { connectListening } from "../idempotency/admin";
import type { ProviderAdapter, ProviderObject, ProviderPage, ReconcileWindow } from "./adapter";
import { ProviderReadError } from "./adapter";
import { COMPARE_SQL } from "./compare-sql";
import { FINDING_KINDS, type FindingKind } from "./finding-types";
import type { ReconcileProvider } from "./providers";

export { FINDING_KINDS, type FindingKind } from "./finding-types";

type FindingCounts = Record<FindingKind, number>;

interface ReconcileOptions {
  /** Connections with the console's schema first on the search_path (as the console's pools). */
  pool: pg.Pool;
  adapter: ProviderAdapter;
  provider: ReconcileProvider;
  window: ReconcileWindow;
  graceSeconds: number;
  trigger: "schedule" | "manual" | "api";
  requestedBy?: string | null;
  /**
   * Called once the run's row exists (inserted, or a dead run's taken up), before the provider is
   * read: a caller that starts a run in the background answers with the row of this id.
   */
  onStarted?: (run: { runId: number; resumed: boolean }) => void;
  /** Called after each batch of pages is staged (with the checkpoint past it). */
  onProgress?: (progress: { runId: number; pages: number; objects: number; resumed: boolean }) => void;
  /** How many pages commit together; STAGE_BATCH by default. */
  stageBatch?: StageBatch;
}

/**
 * Pages are staged in batches: the rows of all of a batch's pages and the checkpoint past its last
 * page commit in one statement. A batch closes at `objects` objects or `ms` after its first page,
 * whichever comes first, so a fast provider costs one commit per few thousand objects and a slow
 * one still checkpoints (and shows progress) every second. A run killed mid-way reads again at
 * most the pages of one open batch.
 */
interface StageBatch {
  objects: number;
  ms: number;
}
const STAGE_BATCH: StageBatch = { objects: 5000, ms: 1000 };

export interface ReconcileResult {
  runId: number;
  status: "completed" | "failed";
  resumed: boolean;
  matched: number;
  effectsSeen: number;
  objectsSeen: number;
  counts: FindingCounts;
  error: string | null;
}

/** Another run of this provider and window holds the lock: this one wrote nothing. */
export class ReconcileBusyError extends Error {
  constructor(provider: string, window: ReconcileWindow) {
    super(`a reconciliation of ${provider} for ${window.from.toISOString()}..${window.to.toISOString()} is already running`);
    this.name = "ReconcileBusyError";
  }
}

interface Checkpoint {
  cursor: string | null;
  pages: number;
  staged: number;
}

const zeroCounts = (): FindingCounts => Object.fromEntries(FINDING_KINDS.map((kind) => [kind, 0])) as FindingCounts;

/**
 * One reconciliation of a provider for a window. Idempotent (findings upsert by identity) and
 * resumable: a run that died while reading the provider is taken up again from its checkpoint by
 * the next call for the same window, and ends with the same findings. Two calls for one window at
 * once: the second gets ReconcileBusyError (a session advisory lock keyed by schema, provider and
 * window). A provider that cannot be read ends the run failed with the reason, never matched.
 */
export async function reconcile(options: ReconcileOptions): Promise<ReconcileResult> {
  const { pool, provider, window } = options;
  if (!(window.from < window.to)) throw new RangeError("reconcile window: from must be before to");
  // Held for the whole run, across the provider's pages: a connection cut between two queries is
  // heard here (then the next query fails the run) and the connection is not given back.
  let lost = false;
  const onLost = () => {
    lost = true;
  };
  const db = await connectListening(pool, onLost);
  let locked = false;
  return runLocked<StartedRun, ReconcileResult>({
    start: async () => {
      const { rows } = await db.query<{ locked: boolean }>(
        `SELECT pg_try_advisory_lock(hashtextextended(format('onceboard.reconcile|%s|%s|%s|%s', current_schema(), $1::text, $2::timestamptz, $3::timestamptz), 0)) AS locked`,
        [provider.name, window.from, window.to],
      );
      locked = rows[0]!.locked;
      return locked ? await beginRun(options, db) : null;
    },
    busy: () => {
      throw new ReconcileBusyError(provider.name, window);
    },
    onStarted: ({ runId, resumed }) => options.onStarted?.({ runId, resumed }),
    steps: (run) => stageAndCompare(options, db, run),
    failed: (run, error) => recordFailure(options, db, run, error),
    release: async () => {
      if (locked && !lost) await db.query("SELECT pg_advisory_unlock_all()").catch(() => {});
      // The connection goes back to the pool: a listener left on it would outlive this run, one more each run.
      db.off("error", onLost);
      db.release(lost ? true : undefined);
    },
  });
}

/** A run whose row exists: its id, whether a dead run was taken up, and how far it has read. */
interface StartedRun {
  runId: number;
  resumed: boolean;
  checkpoint: Checkpoint;
}

/** Under the window's lock: takes up the run a dead runner left running, or inserts a new one. */
async function beginRun(options: ReconcileOptions, db: pg.PoolClient): Promise<StartedRun> {
  const { provider, window } = options;
  // We hold the window's lock, so a run still marked running died: resume it.
  const { rows: open } = await db.query<{ id: number; checkpoint: Checkpoint | null }>(
    `SELECT id, checkpoint FROM reconciliation_runs
      WHERE provider = $1 AND window_from = $2 AND window_to = $3 AND status = 'running'
      ORDER BY id DESC LIMIT 1`,
    [provider.name, window.from, window.to],
  );
  const fresh: Checkpoint = { cursor: null, pages: 0, staged: 0 };
  const dead = open[0];
  if (dead) {
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM reconciliation_staged_objects WHERE run_id = $1",
      [dead.id],
    );
    const saved = dead.checkpoint;
    // The staging table is unlogged: after a database crash it is empty and the provider is read again.
    const checkpoint = saved && rows[0]!.n === saved.staged ? saved : fresh;
    if (checkpoint === fresh) await db.query("DELETE FROM reconciliation_staged_objects WHERE run_id = $1", [dead.id]);
    await db.query("UPDATE reconciliation_runs SET heartbeat_at = now() WHERE id = $1", [dead.id]);
    return { runId: dead.id, resumed: true, checkpoint };
  }
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO reconciliation_runs (provider, window_from, window_to, grace_seconds, status, trigger, requested_by, heartbeat_at, checkpoint)
     VALUES ($1, $2, $3, $4, 'running', $5, $6, now(), $7) RETURNING id`,
    [provider.name, window.from, window.to, options.graceSeconds, options.trigger, options.requestedBy ?? null, fresh],
  );
  return { runId: rows[0]!.id, resumed: false, checkpoint: fresh };
}

async function stageAndCompare(options: ReconcileOptions, db: pg.PoolClient, run: StartedRun): Promise<ReconcileResult> {
  const { adapter, window } = options;
  const { runId, resumed } = run;
  // Objects are listed a grace period past the window's end: an effect claimed just before `to` may
  // have its object created just after. Only objects inside the window can be unknown or late.
  const listWindow = { from: window.from, to: new Date(window.to.getTime() + options.graceSeconds * 1000) };
  const batchLimits = options.stageBatch ?? STAGE_BATCH;
  // The batch being committed, if any: its outcome (null, or what it threw), awaited before the
  // next batch commits and before the run is failed, so the connection runs one statement at a time.
  let committing: Promise<unknown> = Promise.resolve(null);
  const commitBatch = async (objects: ProviderObject[], pages: number, cursor: string | null) => {
    const after: Checkpoint = { cursor, pages: run.checkpoint.pages + pages, staged: run.checkpoint.staged + objects.length };
    await stageBatch(db, runId, objects, after);
    run.checkpoint = after;
    options.onProgress?.({ runId, pages: after.pages, objects: after.staged, resumed });
  };
  try {
    const listAfter = (cursor: string | null) => {
      const page = adapter.listPage(listWindow, cursor);
      page.catch(() => {}); // awaited below; a failure while a batch commits must not be "unhandled"
      return page;
    };
    // A resumed run whose checkpoint is past the last page has nothing left to read.
    let next: Promise<ProviderPage> | null =
      run.checkpoint.pages > 0 && run.checkpoint.cursor === null ? null : listAfter(run.checkpoint.cursor);
    let batch: ProviderObject[] = [];
    let batchPages = 0;
    let batchOpened = 0;
    while (next) {
      const page = await next;
      // The next page is asked for before this one is staged: the provider's round trip overlaps the database's.
      next = page.next === null ? null : listAfter(page.next);
      if (batchPages === 0) batchOpened = performance.now();
      for (const object of page.objects) batch.push(object);
      batchPages++;
      if (next === null || batch.length >= batchLimits.objects || performance.now() - batchOpened >= batchLimits.ms) {
        const failed = await committing;
        if (failed) throw failed;
        committing = commitBatch(batch, batchPages, page.next).then(
          () => null,
          (error: unknown) => error ?? new Error("staging failed"),
        );
        batch = [];
        batchPages = 0;
      }
    }
    const failed = await committing;
    if (failed) throw failed;
    return await compare(options, db, runId, run.checkpoint, resumed);
  } catch (error) {
    // The run is failed only once the batch in flight has finished on the connection.
    await committing;
    throw error;
  }
}

/** Ends the run failed with the reason (a provider that cannot be read: never matched), its staged objects gone. */
async function recordFailure(
  options: ReconcileOptions,
  db: pg.PoolClient,
  { runId, resumed, checkpoint }: StartedRun,
  error: unknown,
): Promise<ReconcileResult> {
  const message =
    error instanceof ProviderReadError
      ? error.message
      : `reconciliation of ${options.provider.name} failed: ${error instanceof Error ? error.message : String(error)}`;
  await db.query("ROLLBACK").catch(() => {});
  await db.query(
    `UPDATE reconciliation_runs SET status = 'failed', error = $2, finished_at = now(), heartbeat_at = now() WHERE id = $1`,
    [runId, message],
  );
  await db.query("DELETE FROM reconciliation_staged_objects WHERE run_id = $1", [runId]);
  return {
    runId,
    status: "failed",
    resumed,
    matched: 0,
    effectsSeen: 0,
    objectsSeen: checkpoint.staged,
    counts: zeroCounts(),
    error: message,
  };
}

/**
 * Stages a batch and moves the checkpoint past it, in one statement (so one transaction): a kill
 * before it commits leaves neither, and the resumed run lists the batch's pages again.
 */
async function stageBatch(db: pg.PoolClient, runId: number, objects: ProviderObject[], after: Checkpoint): Promise<void> {
  await db.query(
    `WITH staged AS (
       INSERT INTO reconciliation_staged_objects (run_id, object_id, object_key, tenant_id, amount, currency, status, created, metadata)
       SELECT $1, o.id, o.key, o.tenant, o.amount, o.currency, o.status, o.created, o.metadata
         FROM json_to_recordset($2::json)
           AS o(id text, key text, tenant text, amount bigint, currency text, status text, created timestamptz, metadata jsonb)
     )
     UPDATE reconciliation_runs SET checkpoint = $3, objects_seen = $4, heartbeat_at = now() WHERE id = $1`,
    [runId, JSON.stringify(objects), after, after.staged],
  );
}

async function compare(
  options: ReconcileOptions,
  db: pg.PoolClient,
  runId: number,
  checkpoint: Checkpoint,
  resumed: boolean,
): Promise<ReconcileResult> {
  const { provider, window } = options;
  await db.query("BEGIN");
  // JIT compiling this one statement's plan costs seconds (measured: 1.7 s at a million pairs, 8 s
  // on a loaded machine) and buys nothing: its work is hashing, not expression evaluation.
  await db.query("SET LOCAL jit = off");
  const { rows } = await db.query<{
    matched: number;
    effects_seen: number;
    objects_seen: number;
    counts: Partial<FindingCounts>;
  }>(COMPARE_SQL, [
    runId,
    provider.name,
    window.from,
    window.to,
    provider.jobTypes,
    provider.keyPrefixes.map((prefix) => `${prefix.replace(/[\\%_]/g, "\\$&")}%`),
    options.graceSeconds,
    provider.keyRequired,
    provider.compareFields,
    provider.objectNoun,
  ]);
  const row = rows[0]!;
  const counts = { ...zeroCounts(), ...row.counts };
  await db.query(
    `UPDATE reconciliation_runs
        SET status = 'completed', finished_at = now(), heartbeat_at = now(), matched = $2, effects_seen = $3, objects_seen = $4,
            counts = $5, checkpoint = $6
      WHERE id = $1`,
    [runId, row.matched, row.effects_seen, row.objects_seen, counts, checkpoint],
  );
  await db.query(
    `INSERT INTO reconciliation_coverage (provider, window_from, window_to, run_id, completed_at)
     VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (provider, window_from, window_to) DO UPDATE SET run_id = EXCLUDED.run_id, completed_at = EXCLUDED.completed_at`,
    [provider.name, window.from, window.to, runId],
  );
  await db.query("DELETE FROM reconciliation_staged_objects WHERE run_id = $1", [runId]);
  await db.query("COMMIT");
  return {
    runId,
    status: "completed",
    resumed,
    matched: row.matched,
    effectsSeen: row.effects_seen,
    objectsSeen: row.objects_seen,
    counts,
    error: null,
  };
}

/** The CLI's last line: `reconcile matched=N duplicated_at_provider=N …`. */
export function summaryLine(result: Pick<ReconcileResult, "matched" | "counts">): string {
  return `reconcile matched=${result.matched} ${FINDING_KINDS.map((kind) => `${kind}=${result.counts[kind]}`).join(" ")}`;
}
