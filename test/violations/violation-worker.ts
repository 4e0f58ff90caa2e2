/**
 * Child process for violations.test.ts: one effects.once whose handler writes a ledger entry twice
 * (an uncaught unique violation), then SIGKILL the moment the violation comes back to the caller.
 * The rollups are on but never flushed (no timer, no close), as in a worker killed between flushes.
 */
import pg from "pg";
import { Registry } from "prom-client";
import { createEffects } from "../../lib/idempotency";
import { silentLogger } from "../../lib/idempotency/test/helpers";

const url = process.env.VIOLATION_DATABASE_URL;
const key = process.env.VIOLATION_KEY;
if (!url || !key) throw new Error("VIOLATION_DATABASE_URL and VIOLATION_KEY are required");

const pool = new pg.Pool({ connectionString: url, max: 3 });
const effects = createEffects({ db: pool, registry: new Registry(), logger: silentLogger(), flushInterval: 0, register: false });
try {
  await effects.once({ tenant: "acme", key, jobType: "mark-paid-killed", messageId: `msg-${key}` }, () =>
    pool.query("INSERT INTO ledger (order_id) VALUES ($1), ($1)", [key]),
  );
} catch (error) {
  if ((error as { code?: string }).code === "23505") process.kill(process.pid, "SIGKILL");
  throw error;
}
process.stdout.write("FINISHED without a violation\n");
process.exit(3);
