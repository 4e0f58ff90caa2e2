/**
 * Child process for timeline.test.ts: claims TIMELINE_KEY (owned, never completed) and flushes
 * its timeline, then takes TIMELINE_UNFLUSHED duplicate deliveries of TIMELINE_DONE_KEY without
 * flushing, announces READY on stdout and hangs until the parent SIGKILLs it, like a crash
 * between two flushes.
 */
import { Registry } from "prom-client";
import { createEffects } from "../index";
import { poolForUrl } from "./engines";
import { silentLogger } from "./helpers";

const url = process.env.TIMELINE_DATABASE_URL;
const key = process.env.TIMELINE_KEY;
const doneKey = process.env.TIMELINE_DONE_KEY;
const unflushed = Number(process.env.TIMELINE_UNFLUSHED ?? "0");
if (!url || !key || !doneKey) throw new Error("TIMELINE_DATABASE_URL, TIMELINE_KEY and TIMELINE_DONE_KEY are required");

// PostgreSQL or MariaDB, by the URL the test hands over (engines.ts).
const { pool, schema } = poolForUrl(url, 2);
const effects = createEffects({
  db: pool,
  schema,
  lease: "300ms",
  registry: new Registry(),
  logger: silentLogger(),
  rollups: false,
  register: false,
  flushInterval: 0,
  workerId: "timeline-child",
});

const owned = await effects.claim({ tenant: "t1", key, jobType: "timeline", messageId: "child-1" });
if (owned.kind !== "owned") throw new Error(`the child expected to own ${key}, got ${owned.kind}`);
if (!(await effects.flush())) throw new Error("the child's flush failed");
for (let i = 0; i < unflushed; i++) {
  await effects.claim({ tenant: "t1", key: doneKey, jobType: "timeline", messageId: `child-dup-${i}`, attempt: 2 });
}
process.stdout.write("READY\n");
await new Promise(() => {}); // wait to be killed
