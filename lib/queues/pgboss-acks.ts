import type PgBoss from "pg-boss";

/**
 * Completes acked jobs together: one `complete` statement for every job acked within `intervalMs`
 * of the first. A completion that fails (the database is away) is tried again with the next ones,
 * backing off; the jobs stay active meanwhile, and one that expires first is redelivered and
 * suppressed as a duplicate.
 */
export function batchedCompletions(boss: PgBoss, queue: string, intervalMs: number, reportError: (error: unknown) => void) {
  let waiting: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  let failures = 0;
  let closed = false;
  const flush = async () => {
    if (waiting.length === 0) return;
    const ids = waiting;
    waiting = [];
    try {
      await boss.complete(queue, ids);
      failures = 0;
    } catch (error) {
      waiting = ids.concat(waiting);
      failures++;
      reportError(error);
    }
  };
  const schedule = () => {
    if (timer || flushing || closed || waiting.length === 0) return;
    const delay = failures === 0 ? intervalMs : Math.min(250 * failures, 5000);
    timer = setTimeout(() => {
      timer = undefined;
      flushing = flush().finally(() => {
        flushing = undefined;
        schedule();
      });
    }, delay);
  };
  return {
    add(id: string) {
      waiting.push(id);
      schedule();
    },
    /** Flushes what is waiting, retrying until `deadline`; later acks are dropped (their jobs expire). */
    async close(deadline: number) {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      await flushing;
      for (;;) {
        await flush();
        if (waiting.length === 0 || Date.now() >= deadline) return;
        await new Promise((r) => setTimeout(r, Math.min(250 * failures, 5000, Math.max(1, deadline - Date.now()))));
      }
    },
  };
}
