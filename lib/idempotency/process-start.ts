/**
 * When this process started, to the second: one value for the process_start_time_seconds a
 * worker's /metrics serves and the start its registration records (worker_starts), so the two
 * name the same start.
 */
export const processStartedAt = (): Date => new Date(Math.round(Date.now() / 1000 - process.uptime()) * 1000);
