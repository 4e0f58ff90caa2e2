/** The servers scripts/e2e.ts started; running Playwright without it has nothing to test. */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the browser tests with \`npm run test:e2e\`, which starts the servers`);
  return value;
}

export const BASE_URL = required("ONCEBOARD_E2E_BASE_URL");
export const BROKEN_URL = required("ONCEBOARD_E2E_BROKEN_URL");
/** A console on a database whose every table is filled past the seeds (test/console-fill.ts): the layout checks read it. */
export const FILLED_URL = required("ONCEBOARD_E2E_FILLED_URL");
/** The healthy console's WORKER_METRICS_URLS: a fake worker serving e2e/worker-metrics.ts, and a closed port. */
export const WORKER_UP_URL = required("ONCEBOARD_E2E_WORKER_UP_URL");
export const WORKER_DOWN_URL = required("ONCEBOARD_E2E_WORKER_DOWN_URL");

/** Where screenshots are kept after a run (git-ignored). */
export const SCREENSHOT_DIR = "test-results/screenshots";
