/**
 * Child process for interleave.test.ts: for INTERLEAVE_SECONDS, 16 loops call effects.once on keys
 * shared with the other children (a new set of INTERLEAVE_KEYS keys every EPOCH_MS, by the clock, so
 * the processes overlap on each set while it is fresh). Each body, by its run id, returns normally,
 * throws (a failure: the next delivery retries), or outlives its lease (another delivery takes it
 * over). Every answer is printed as one JSON line for the parent to check.
 */
import { randomUUID } from "node:crypto";
import { Registry } from "prom-client";
import { createEffects } from "../index";
import { poolForUrl } from "./engines";
import { silentLogger, sleep } from "./helpers";

const url = process.env.INTERLEAVE_DATABASE_URL;
if (!url) throw new Error("INTERLEAVE_DATABASE_URL is required");
const seconds = Number(process.env.INTERLEAVE_SECONDS ?? 3);
const keys = Number(process.env.INTERLEAVE_KEYS ?? 12);
const epochMs = Number(process.env.INTERLEAVE_EPOCH_MS ?? 400);
const LEASE_MS = 150;

// PostgreSQL or MariaDB, by the URL the test hands over (engines.ts).
const { pool, schema } = poolForUrl(url, 8);
const effects = createEffects({
  db: pool,
  schema,
  lease: LEASE_MS,
  wait: "5s",
  registry: new Registry(),
  logger: silentLogger(),
  rollups: false,
  flushInterval: 0,
  register: false,
  coalesce: process.env.INTERLEAVE_COALESCE !== "0",
});

type Plan = "return" | "throw" | "outlive";
const planFor = (): Plan => {
  const r = Math.random();
  return r < 0.15 ? "throw" : r < 0.22 ? "outlive" : "return";
};

const deadline = Date.now() + seconds * 1000;
const out: string[] = [];
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (Date.now() < deadline) {
      const key = `charge:e${Math.floor(Date.now() / epochMs)}-${Math.floor(Math.random() * keys)}`;
      const runId = randomUUID();
      const plan = planFor();
      let ran = false;
      try {
        const r = await effects.once({ tenant: "interleave", key, jobType: "interleave" }, async () => {
          ran = true;
          if (plan === "throw") throw new Error(`planned failure ${runId}`);
          await sleep(plan === "outlive" ? LEASE_MS * 3 : Math.random() * 5);
          return { runId };
        });
        out.push(JSON.stringify({ key, runId, plan, ran, answer: r.result, outcome: r.outcome }));
      } catch (error) {
        const e = error as Error & { code?: string };
        out.push(JSON.stringify({ key, runId, plan, ran, answer: "error", error: e.code ?? e.name, message: e.message }));
      }
    }
  }),
);
await effects.close();
await (pool as unknown as { end(): Promise<void> }).end();
process.stdout.write(`${out.join("\n")}\n`);
