/**
 * Child process for crash.test.ts: runs the paid-order job and, on reaching KILL_AT, announces
 * it on stdout and hangs until the parent SIGKILLs it (no cleanup, no completion, like a crash).
 */
import { Registry } from "prom-client";
import { createEffects } from "../index";
import { type Boundary, naivePaidOrderJob, paidOrderJob } from "./crash-job";
import { poolForUrl } from "./engines";
import { silentLogger } from "./helpers";

const url = process.env.CRASH_DATABASE_URL;
const orderId = process.env.CRASH_ORDER_ID;
const killAt = process.env.CRASH_KILL_AT as Boundary | undefined;
if (!url || !orderId || !killAt) throw new Error("CRASH_DATABASE_URL, CRASH_ORDER_ID and CRASH_KILL_AT are required");

// PostgreSQL or MariaDB, by the URL the test hands over (engines.ts).
const { pool, schema } = poolForUrl(url, 3);
const effects = createEffects({
  db: pool,
  schema,
  lease: "300ms",
  registry: new Registry(),
  logger: silentLogger(),
  rollups: false,
  coalesce: process.env.CRASH_COALESCE !== "0",
});

const at = async (boundary: Boundary) => {
  if (boundary !== killAt) return;
  process.stdout.write(`BOUNDARY ${boundary}\n`);
  await new Promise(() => {}); // wait to be killed
};
if (process.env.CRASH_NAIVE === "1") await naivePaidOrderJob(pool, orderId, at);
else await paidOrderJob(effects, pool, orderId, at);
process.stdout.write("FINISHED without reaching the boundary\n");
process.exit(3);
