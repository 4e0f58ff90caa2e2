/**
 * The console's background runs, one shape: take the lock and write (or take up) the run's row,
 * tell the caller the run started, run its steps, record a failure on the row rather than throw it,
 * and let the lock go whatever happened. The reconciler (an advisory lock per provider window) and
 * the bulk-action runner (a lease on the action's row) are two locks of this one shape.
 *
 * The library's maintain() (lib/idempotency/maintenance.ts) is the same shape and keeps its own:
 * the library ships alone and imports nothing of the console, and a runner on its admin entry would
 * be one more public name for what is ten lines here.
 */
export interface LockedRun<Run, Result> {
  /** Takes the lock and writes or takes up the run's row; null when another runner holds it. */
  start(): Promise<Run | null>;
  /** The answer when another runner holds the lock (or throws the refusal). */
  busy(): Result | Promise<Result>;
  /** Told once the run's row exists, before any step: a caller in a hurry answers with its id. */
  onStarted?: (run: Run) => void;
  steps(run: Run): Promise<Result>;
  /** A step threw: the failure recorded on the run's row, as its answer. */
  failed(run: Run, error: unknown): Promise<Result>;
  /** Lets the lock go; called whether the run started, was refused or failed. */
  release(run: Run | null): Promise<void>;
}

export async function runLocked<Run, Result>(spec: LockedRun<Run, Result>): Promise<Result> {
  let run: Run | null = null;
  try {
    run = await spec.start();
    if (run === null) return await spec.busy();
    spec.onStarted?.(run);
    try {
      return await spec.steps(run);
    } catch (error) {
      return await spec.failed(run, error);
    }
  } finally {
    await spec.release(run);
  }
}
