/**
 * Buffers writes in memory and flushes them on an interval and on demand. Concurrent flush()
 * calls share one flush, so close() and the timer never write the same batch twice.
 */
export abstract class PeriodicFlush {
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<boolean> | undefined;

  start(intervalMs: number): void {
    if (this.timer || intervalMs <= 0) return;
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Writes what is pending; true when everything was written. */
  flush(): Promise<boolean> {
    this.flushing ??= this.flushOnce().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  protected abstract flushOnce(): Promise<boolean>;
}
