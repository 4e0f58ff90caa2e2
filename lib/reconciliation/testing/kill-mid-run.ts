// A reconciliation in its own process that SIGKILLs itself after a number of staged pages: no
// cleanup, no rollback of what committed, the run left "running" with its checkpoint.
// Usage: tsx kill-mid-run.ts <database url> <provider port> <from iso> <to iso> <pages>
import pg from "pg";
import { consolePoolConfig } from "../../db/pool";
import { DEFAULT_SCHEMA } from "../../idempotency";
import { reconcile } from "../reconcile";
import { StripeAdapter, stripeClient } from "../stripe";
import { demoProvider, FAST_RETRY, TEST_STRIPE_KEY } from "./harness";

const [url, port, from, to, pages] = process.argv.slice(2) as [string, string, string, string, string];
const pool = new pg.Pool(
  consolePoolConfig({
    connectionString: url,
    schema: DEFAULT_SCHEMA,
    statementTimeoutMs: null,
    max: 2,
    application_name: "kill-mid-run",
  }),
);
const stripe = stripeClient({
  STRIPE_API_KEY: TEST_STRIPE_KEY,
  STRIPE_HOST: "127.0.0.1",
  STRIPE_PORT: Number(port),
  STRIPE_PROTOCOL: "http",
});
await reconcile({
  pool,
  adapter: new StripeAdapter(stripe, FAST_RETRY, 100),
  provider: demoProvider("stripe", { mailerUrl: "http://127.0.0.1:9/unused" }, { STRIPE_API_KEY: TEST_STRIPE_KEY }),
  window: { from: new Date(from), to: new Date(to) },
  graceSeconds: 0,
  trigger: "manual",
  // Two pages a batch, whatever the time: the kill lands between committed batches, mid-window.
  stageBatch: { objects: 200, ms: 60_000 },
  onProgress: (progress) => {
    if (progress.pages >= Number(pages)) process.kill(process.pid, "SIGKILL");
  },
});
console.error("the run finished before it was killed");
process.exit(2);
