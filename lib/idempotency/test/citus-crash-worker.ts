/**
 * Child process for citus.test.ts: claims CITUS_CRASH_KEY on the Citus coordinator, announces
 * RUNNING on stdout from inside the step and hangs until the parent SIGKILLs it (no completion, no
 * cleanup: a crash mid-step).
 */
import pg from "pg";
import { Registry } from "prom-client";
import { createEffects } from "../index";
import { silentLogger } from "./helpers";

const url = process.env.CITUS_URL;
const schema = process.env.CITUS_CRASH_SCHEMA;
const tenant = process.env.CITUS_CRASH_TENANT;
const key = process.env.CITUS_CRASH_KEY;
if (!url || !schema || !tenant || !key) throw new Error("CITUS_URL, CITUS_CRASH_SCHEMA, _TENANT and _KEY are required");

const pool = new pg.Pool({ connectionString: url, max: 3 });
const effects = createEffects({
  db: pool,
  schema,
  lease: "500ms",
  registry: new Registry(),
  logger: silentLogger(),
  rollups: false,
  register: false,
  coalesce: process.env.CITUS_CRASH_COALESCE !== "0",
});
await effects.once({ tenant, key, jobType: "citus.crash" }, async () => {
  process.stdout.write("RUNNING\n");
  await new Promise(() => {}); // wait to be killed
});
process.stdout.write("FINISHED without being killed\n");
process.exit(3);
