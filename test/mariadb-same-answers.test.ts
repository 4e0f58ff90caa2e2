import { setTimeout as sleep } from "node:timers/promises";
import type mysql from "mysql2/promise";
import type pg from "pg";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createToken } from "../lib/auth/tokens";
import { closeEffectsMysqlPools, createMysqlEffectsPool } from "../lib/db/effects-pool";
import { ensureEffectPartitions } from "../lib/db/partitions";
import { createMysqlScratchDatabase, type ScratchDatabase } from "../lib/db/scratch";
import { startConsoleMaintenance } from "../lib/features/retention-and-gaps/schedule";
import { createEffects, type Effects, migrate, serveMetrics } from "../lib/idempotency";
import type { MetricsServer } from "../lib/idempotency/serve-metrics";
import { callDocumented as call } from "./api/harness";
import { pointConsoleAt } from "./citus-database";
import { createTestDatabase, type TestDatabase } from "./database";
import { findTestMariadb } from "./mariadb";

/**
 * The console's same-answers test (issue 39): one workload, written through the worker library into
 * a PostgreSQL effects store and into a MariaDB one, step by step in lockstep, then every read of
 * Keys, Violations, the Overview, Delivery gaps and the advisor, and Retention asked of the console's
 * route handlers (withAuth, zod, the read models, the JSON out, as test/api/harness.ts calls them)
 * on each: once with the effects in the console's PostgreSQL, once with EFFECTS_DATABASE_URL naming
 * the MariaDB database, the console's own tables (tokens, audit) in a second PostgreSQL database
 * that holds no effects at all, so a read that forgot the seam answers from an empty table and
 * differs. The answers must be the same, field by field, apart from what `comparable` blanks (each
 * blanking says why it is no difference between the engines).
 *
 * Outside CI a MariaDB that does not answer skips this file loudly; under CI=true it is required.
 */
const mariadbUrl = await findTestMariadb();

// A machine zone far from UTC (+13:45), for the whole file: a DATETIME read or bound as local time
// instead of UTC (the console's MySQL sessions and pools are UTC, lib/db/effects-pool.ts) then
// moves every instant by hours, out of the run's window, and shows as a difference.
process.env.TZ = "Pacific/Chatham";

const silent = pino({ level: "silent" });
const enc = encodeURIComponent;

const TENANTS = ["northwind", "umbrella", "stark"] as const;
const SETTLE = "invoice.settle";
const LABEL = "shipment.label";
const RENEW = "subscription.renew";
const MAIL = "mail.send";

type Engine = "postgres" | "mariadb";

/** The keyset lists paged through to their end, a few rows a page, on both engines. */
const PAGED: readonly [path: string, limit: number][] = [
  ["/api/v1/effects?q=inv", 2],
  ["/api/v1/effects", 3],
  ["/api/v1/effects?q=settle:", 1],
  ["/api/v1/effects?q=batch", 5],
  ["/api/v1/effects?q=BATCH:A", 1],
  ["/api/v1/effect-states/completed", 4],
];

/** One engine's side of the workload: its two workers and the application's own handle for its tables. */
interface Side {
  engine: Engine;
  a: Effects;
  b: Effects;
  /** The application's own statement (a handler's writes): `$n` on PostgreSQL, `?` on MariaDB. */
  app(sql: { pg: string; mysql: string }, values: unknown[]): Promise<unknown>;
}

const workerOptions = (db: unknown, schema: string, name: string) =>
  ({
    db,
    schema,
    logger: silent,
    flushInterval: 0,
    workerId: `same-${name}`,
    workerName: `same-${name}`,
    register: true,
    maxRetryWindow: "1d",
  }) as Parameters<typeof createEffects>[0];

const settle = (w: Effects, tenant: string, invoice: string, amount: number, messageId: string, attempt = 1) =>
  w.once(
    { tenant, key: `settle:${invoice}`, jobType: SETTLE, messageId, attempt, payload: { invoice, amount } },
    async (claim) => ({ charged: amount, invoice, providerKey: claim.providerKey }),
  );

/** Runs `step` on both sides at once, so that each step's rows on the two engines fall in the same minute's rollup. */
async function both(sides: readonly Side[], step: (side: Side) => Promise<unknown>): Promise<void> {
  await Promise.all(sides.map(step));
}

async function expectRejection(promise: Promise<unknown>, test: (error: unknown) => boolean, what: string): Promise<void> {
  try {
    await promise;
  } catch (error) {
    if (test(error)) return;
    throw error;
  }
  throw new Error(`${what}: expected a rejection`);
}

/**
 * The workload: fresh claims, sequential and concurrent duplicates, a failure, a refused key reuse,
 * an uncaught unique violation from a handler's own write, a job of two steps, a takeover after a
 * crash, an at-most-once takeover (abandoned), a stuck claim and a live in-flight one, three
 * tenants and four job types. Each step is awaited on both engines before the next begins.
 */
async function writeWorkload(sides: readonly Side[]): Promise<void> {
  // Fresh claims and sequential duplicates (redeliveries by the broker: attempt 2, 3).
  // Most duplicates come within seconds of their first delivery, a gap each engine measures on its
  // own clock, as late as the shared machine runs each statement (0.4 s apart was seen). The gaps
  // the largest-gap reads pick are made long and exact instead (effects moved back in time on both
  // engines): the renewal's charge two hours, INV-900 four days.
  await both(sides, (s) => settle(s.a, "northwind", "INV-101", 1200, "nw-101"));
  await both(sides, (s) => settle(s.b, "northwind", "INV-101", 1200, "nw-101", 2));
  await both(sides, (s) => settle(s.a, "northwind", "INV-102", 800, "nw-102"));
  await both(sides, (s) => settle(s.a, "northwind", "INV-102", 800, "nw-102", 2));
  await both(sides, (s) => settle(s.b, "northwind", "INV-102", 800, "nw-102", 3));
  for (const [i, tenant] of TENANTS.entries()) {
    await both(sides, (s) => settle(s.a, tenant, `INV-2${i}0`, 100 + i, `${tenant}-2${i}0`));
    await both(sides, (s) => settle(s.b, tenant, `INV-2${i}1`, 200 + i, `${tenant}-2${i}1`));
  }

  // A batch: one statement claims every key, so they share one created_at on each engine, and the
  // lists order them by tenant and key alone; keys that a linguistic collation orders otherwise
  // than their bytes do ("B" < "a", "-" < "_" < "a", "ä" last).
  await both(sides, async (s) => {
    const keys = ["batch:a", "batch:B", "batch:a_1", "batch:a-1", "batch:\u00e4", "batch:b"];
    const claimed = await s.a.claimMany(
      keys.flatMap((key, i) =>
        ["stark", "umbrella"].map((tenant) => ({ tenant, key, jobType: MAIL, messageId: `${tenant}-batch-${i}`, attempt: 1 })),
      ),
    );
    const owned = claimed.map((c) => {
      if (c.kind !== "owned") throw new Error(`${s.engine}: a batch claim was ${c.kind}`);
      return { claim: c.claim, outcome: { batched: true } };
    });
    await s.a.completeMany(owned);
  });

  // Concurrent duplicates: four copies of one message at once; one runs, the others wait for its
  // outcome. The step takes 2 s, long enough for every copy to reach the database while it runs
  // however loaded the machine (with 0.1 s, a loaded PostgreSQL saw two copies arrive after it and
  // answered "duplicate" where MariaDB answered "waited"); their gap, about 2 s, sits mid-bucket.
  await both(sides, (s) =>
    Promise.all(
      [1, 2, 3, 4].map((attempt) =>
        (attempt % 2 ? s.a : s.b).once(
          { tenant: "umbrella", key: "mail:welcome-7", jobType: MAIL, messageId: "um-mail-7", attempt, payload: { to: "u7" } },
          async () => {
            await sleep(2000);
            return { sent: true };
          },
        ),
      ),
    ).then((results) => {
      const ran = results.filter((r) => r.result === "ran").length;
      if (ran !== 1) throw new Error(`${s.engine}: ${ran} of the concurrent copies ran`);
    }),
  );

  // A failure: the handler throws; the effect is failed.
  await both(sides, (s) =>
    expectRejection(
      s.a.once(
        { tenant: "stark", key: "mail:reset-3", jobType: MAIL, messageId: "st-mail-3", payload: { to: "s3" } },
        async () => {
          throw new Error("smtp said 550: mailbox unavailable");
        },
      ),
      (e) => e instanceof Error && /550/.test(e.message),
      "the failing mail",
    ),
  );

  // A key reuse: the same key with another payload is refused, and nothing runs.
  await both(sides, (s) =>
    expectRejection(
      settle(s.b, "northwind", "INV-101", 9999, "nw-101-bis"),
      (e) => (e as { code?: string }).code === "EFFECT_KEY_REUSE",
      "the reused key",
    ),
  );

  // An uncaught unique violation from the handler's own write (not the claim's): the tracking number twice.
  await both(sides, (s) =>
    expectRejection(
      s.a.once({ tenant: "northwind", key: "label:SHP-7001", jobType: LABEL, messageId: "nw-shp-7001" }, async () => {
        await s.app(
          {
            pg: "INSERT INTO public.same_labels (tracking) VALUES ($1), ($1)",
            mysql: "INSERT INTO same_labels (tracking) VALUES (?), (?)",
          },
          s.engine === "postgres" ? ["TRK-7001"] : ["TRK-7001", "TRK-7001"],
        );
      }),
      (e) => ["23505", "ER_DUP_ENTRY"].includes(String((e as { code?: string }).code)),
      "the doubled label",
    ),
  );
  await both(sides, (s) =>
    s.b.once({ tenant: "umbrella", key: "label:SHP-8001", jobType: LABEL, messageId: "um-shp-8001" }, async () => {
      await s.app(
        { pg: "INSERT INTO public.same_labels (tracking) VALUES ($1)", mysql: "INSERT INTO same_labels (tracking) VALUES (?)" },
        ["TRK-8001"],
      );
      return { tracking: "TRK-8001" };
    }),
  );

  // A job of two steps, each its own key: a charge, then the ledger row in the claim's transaction.
  await both(sides, (s) =>
    s.a.job({ tenant: "northwind", jobType: RENEW, messageId: "nw-sub-42" }, async (job) => {
      const charge = await job.external("renew-charge:SUB-42/2026-12", async () => ({ amount: 1500 }));
      await job.transaction("renew-ledger:SUB-42/2026-12", async (tx) => {
        const values = ["SUB-42", "2026-12", (charge as { amount: number }).amount];
        if (s.engine === "postgres")
          await (tx as pg.PoolClient).query(
            "INSERT INTO public.same_ledger (subscription, period, amount) VALUES ($1, $2, $3)",
            values,
          );
        else
          await (tx as mysql.PoolConnection).query(
            "INSERT INTO same_ledger (subscription, period, amount) VALUES (?, ?, ?)",
            values,
          );
        return { ledger: "written" };
      });
    }),
  );
  // The charge made two hours ago, as if the job had run then; then the same job redelivered: both
  // steps suppressed, the charge's gap two hours, the ledger's under a second.
  await both(sides, (s) =>
    s.app(
      {
        pg: "UPDATE onceboard.effects SET created_at = created_at - interval '2 hours' WHERE tenant_id = $1 AND key = $2",
        mysql: "UPDATE effects SET created_at = created_at - INTERVAL 2 HOUR WHERE tenant_id = ? AND `key` = ?",
      },
      ["northwind", "renew-charge:SUB-42/2026-12"],
    ),
  );
  await both(sides, (s) =>
    s.b.job({ tenant: "northwind", jobType: RENEW, messageId: "nw-sub-42", attempt: 2 }, async (job) => {
      await job.external("renew-charge:SUB-42/2026-12", async () => ({ amount: -1 }));
      await job.transaction("renew-ledger:SUB-42/2026-12", async () => ({ ledger: "again" }));
    }),
  );

  // A crash and a takeover: worker a claims and dies; its lease runs out; b's redelivery runs it again.
  await both(sides, async (s) => {
    const crashed = await s.a.claim({
      tenant: "umbrella",
      key: "settle:INV-303",
      jobType: SETTLE,
      lease: "200ms",
      messageId: "um-303",
      attempt: 1,
      payload: { invoice: "INV-303", amount: 4300 },
    });
    if (crashed.kind !== "owned") throw new Error(`${s.engine}: INV-303's first claim was ${crashed.kind}`);
  });
  // An at-most-once step whose worker died: the takeover marks it abandoned and skips it.
  await both(sides, async (s) => {
    const crashed = await s.a.claim({
      tenant: "stark",
      key: "mail:digest-9",
      jobType: MAIL,
      policy: "atMostOnce",
      lease: "200ms",
      messageId: "st-mail-9",
      attempt: 1,
    });
    if (crashed.kind !== "owned") throw new Error(`${s.engine}: mail:digest-9's first claim was ${crashed.kind}`);
  });
  // Stuck: claimed, never finished, its lease run out, nobody redelivered it.
  await both(sides, (s) =>
    s.b.claim({ tenant: "stark", key: "settle:INV-404", jobType: SETTLE, lease: "200ms", messageId: "st-404", attempt: 1 }),
  );
  await sleep(600);
  await both(sides, (s) => settle(s.b, "umbrella", "INV-303", 4300, "um-303", 2));
  await both(sides, (s) =>
    s.b.once(
      { tenant: "stark", key: "mail:digest-9", jobType: MAIL, policy: "atMostOnce", messageId: "st-mail-9", attempt: 2 },
      async () => ({ sent: "twice?" }),
    ),
  );
  // A late duplicate: INV-900 settled four days ago (its effect's created_at moved back on both
  // engines, as if the workload had run then), redelivered now, beyond the three-day retry window.
  // Its gap, four days, is far from any bucket bound, so both engines count it in the same one.
  await both(sides, (s) => settle(s.a, "stark", "INV-900", 900, "st-900"));
  await both(sides, (s) =>
    s.app(
      {
        pg: "UPDATE onceboard.effects SET created_at = created_at - interval '4 days' WHERE tenant_id = $1 AND key = $2",
        mysql: "UPDATE effects SET created_at = created_at - INTERVAL 4 DAY WHERE tenant_id = ? AND `key` = ?",
      },
      ["stark", "settle:INV-900"],
    ),
  );
  await both(sides, (s) => settle(s.b, "stark", "INV-900", 900, "st-900", 2));
  // A message published eight days ago, beyond the seven-day retention, whose effect no store has:
  // refused, not run blindly.
  await both(sides, (s) =>
    expectRejection(
      s.a.once(
        {
          tenant: "umbrella",
          key: "mail:ancient-1",
          jobType: MAIL,
          messageId: "um-ancient-1",
          attempt: 5,
          publishedAt: new Date(Date.now() - 8 * 86_400_000),
        },
        async () => ({ sent: "too late" }),
      ),
      (e) => (e as { code?: string }).code === "RETENTION_WINDOW",
      "the ancient message",
    ),
  );

  // In flight: claimed with a long lease, its worker still at it.
  await both(sides, (s) =>
    s.a.claim({ tenant: "umbrella", key: "settle:INV-505", jobType: SETTLE, lease: "1h", messageId: "um-505", attempt: 1 }),
  );
  await both(sides, async (s) => {
    await s.a.flush();
    await s.b.flush();
  });
}

interface Answer {
  status: number;
  body: unknown;
}

const FOUR_DAYS = 4 * 86_400_000;
const TWO_HOURS = 2 * 3_600_000;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * What two runs of one workload on two engines cannot share, by field name:
 * - cursors encode the row's instant (each engine's own clock) and are opaque: the paging test
 *   below follows them instead;
 * - ages, lags and durations measured against the console's clock or a claim's own round trip
 *   (how long a claim took, how long ago a lease ran out, a claim's latency quantiles);
 * - ids are each database's own sequences (the violations', the maintenance runs');
 * - `source` names the metrics store the Overview read: "postgres" or "mysql", by design.
 */
const PER_RUN = new Set([
  "nextCursor",
  "cursor",
  "prevCursor",
  "ageSeconds",
  "overdueSeconds",
  "claimMs",
  "latencyMs",
  "durationSeconds",
  "id",
  "source",
  "alertsSource",
  "latencyP50",
  "latencyP99",
]);

/**
 * Seconds between two deliveries of one key, each engine measuring on its own clock: a short gap
 * differs by as much as the shared machine delays a statement (0.4 s was seen), so gaps are
 * compared within 0.5 s (+5 %). A gap read in the wrong unit (ms for s) or from the wrong key (the
 * long ones are two hours and four days) is off by far more.
 */
const MEASURED = new Set([
  "lastDuplicateGapSeconds",
  "maxGapSeconds",
  "gapSeconds",
  "seconds",
  "p50",
  "p90",
  "p99",
  "p999",
  "maxAtLeast",
  "maxAtMost",
  "basisSeconds",
  "candidateSeconds",
  "maxSeconds",
  "observedMaxSeconds",
  "observedMaxUpToSeconds",
  "observedMaxGapSeconds",
]);
const closeEnough = (a: number, b: number) => Math.abs(a - b) <= 0.5 + 0.05 * Math.max(Math.abs(a), Math.abs(b));

/**
 * Text that carries the run's own values:
 * - an owner token is the worker's id and a random one per createEffects instance (a lease's owner);
 * - a handler's duplicate-key error is the engine's own wording ("duplicate key value violates
 *   unique constraint "x"" against "Duplicate entry '…' for key 'x'"): kept as the constraint it names;
 * - a gap written into a sentence ("saw a duplicate 0.33 s after …") is measured as above.
 */
function normaliseText(text: string): string {
  return (
    text
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<random>")
      .replace(/^error: duplicate key value violates unique constraint "([^"]+)".*$/is, "<duplicate key: $1>")
      .replace(/^Error: Duplicate entry '.*' for key '(?:[^'.]+\.)?([^']+)'.*$/is, "<duplicate key: $1>")
      .replace(/^duplicate key value violates unique constraint "([^"]+)".*$/is, "<duplicate key: $1>")
      .replace(/^Duplicate entry '.*' for key '(?:[^'.]+\.)?([^']+)'.*$/is, "<duplicate key: $1>")
      .replace(/\b\d+\.\d+ s\b/g, "<measured> s")
      // A verdict's sub-second gap, rounded to whole seconds: 0 or 1 as the measure falls.
      .replace(/, last [01] s after the first$/, ", last <1 s after the first")
  );
}

/**
 * An answer with what the run makes its own blanked. Instants are each engine's clock at the step
 * (milliseconds apart): each must lie within the run's window on its engine, then is blanked: a
 * time mapped wrongly (a session in another time zone, DATETIME read as local time) lands hours
 * outside it and shows as a difference.
 */
function comparable(value: unknown, window: { from: number; to: number }, key = ""): unknown {
  if (PER_RUN.has(key) && value !== null && value !== undefined) return "<per run>";
  // The settings row's updatedAt, never changed here, is when each store's migrations made it: the
  // PostgreSQL template's at the start of the test run, the MariaDB database's in this file's setup.
  // A live claim's lease ends an hour after it was taken, on each engine's clock.
  if (key === "leaseUntil" && typeof value === "string" && ISO_TIME.test(value)) {
    const t = Date.parse(value) - 3_600_000;
    if (t >= window.from && t <= window.to) return "<an hour after the run>";
  }
  if (key === "updatedAt" && typeof value === "string" && ISO_TIME.test(value)) {
    const t = Date.parse(value);
    return t <= window.to && t >= window.to - 86_400_000 ? "<when the store was installed>" : value;
  }
  if (Array.isArray(value)) return value.map((v) => comparable(v, window));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, comparable(v, window, k)]));
  }
  if (typeof value === "string" && ISO_TIME.test(value)) {
    const t = Date.parse(value);
    if (t >= window.from && t <= window.to) return "<time in the run>";
    // The effects moved back on both engines: INV-900's four days, the renewal charge's two hours.
    if (t + FOUR_DAYS >= window.from && t + FOUR_DAYS <= window.to) return "<four days before the run>";
    if (t + TWO_HOURS >= window.from && t + TWO_HOURS <= window.to) return "<two hours before the run>";
    return value;
  }
  if (typeof value === "string") return normaliseText(value);
  return value;
}

/**
 * The four concurrent copies of mail:welcome-7 reach the database in the race's order, which is
 * neither engine's: its timeline is compared as a set of deliveries, without which copy (its
 * attempt, its worker) came first.
 */
function racedOrderBlanked(path: string, answer: { status: number; body: unknown }): unknown {
  if (path === "/api/v1/retention" && answer.status === 200) return partitionLayoutBlanked(answer);
  if (path === "/api/v1/retention/plan" && answer.status === 200) {
    const { partitions: _partitions, index: _index, ...plan } = answer.body as Record<string, unknown>;
    return { ...answer, body: plan };
  }
  if (!path.startsWith(`/api/v1/effects/${enc("mail:welcome-7")}`) || answer.status !== 200) return answer;
  const body = answer.body as { timeline: Record<string, unknown>[] };
  const timeline = body.timeline
    .map(({ deliveryAttempt: _attempt, worker: _worker, gapSeconds: _gap, ...rest }) => rest)
    .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
  return { ...answer, body: { ...body, timeline } };
}

/**
 * The plan's partitions are each engine's own layout, by design (docs/worker-library.md, "On MySQL
 * and MariaDB"): on PostgreSQL the effects table's day partitions and their Keys indexes; on MySQL
 * the delivery timeline's, effects there being one table whose expired rows are deleted in
 * batches. What the plan decides from (now, what is kept and why, what is made ahead, the runway)
 * is compared; the MySQL partitions are checked on their own below.
 */
function partitionLayoutBlanked(answer: { status: number; body: unknown }): unknown {
  const body = answer.body as { plan: Record<string, unknown> | null };
  if (!body.plan) return answer;
  const { partitions: _partitions, index: _index, ...plan } = body.plan;
  return { ...answer, body: { ...body, plan } };
}

/** The paths where two answers differ, each with both values, for a failure that says what differed. */
function differencesOf(expected: unknown, actual: unknown, path = "", key = ""): string[] {
  if (Object.is(expected, actual)) return [];
  if (MEASURED.has(key) && typeof expected === "number" && typeof actual === "number" && closeEnough(expected, actual)) return [];
  if (expected && actual && typeof expected === "object" && typeof actual === "object") {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    return [...keys].flatMap((k) =>
      differencesOf((expected as Record<string, unknown>)[k], (actual as Record<string, unknown>)[k], `${path}.${k}`, k),
    );
  }
  return [`${path || "."}: PostgreSQL ${JSON.stringify(expected)} · MariaDB ${JSON.stringify(actual)}`];
}

describe.skipIf(!mariadbUrl)("the console on a MariaDB effects store answers as on PostgreSQL (issue 39)", () => {
  let pgDb: TestDatabase;
  let consoleOnly: TestDatabase;
  let scratch: ScratchDatabase;
  let myPool: mysql.Pool;
  const sides: Side[] = [];
  let preparedAt: Date;
  let savedDatabaseUrl: string | undefined;
  let metrics: MetricsServer | undefined;
  let startedAt: Date;
  let finishedAt: Date;
  let answeredAt: Date;
  let answersDoneAt: Date;
  const answers: Record<Engine, Map<string, Answer>> = { postgres: new Map(), mariadb: new Map() };
  const pages: Record<Engine, Map<string, string[][]>> = { postgres: new Map(), mariadb: new Map() };
  const tokens: Record<Engine, Record<"platform" | (typeof TENANTS)[number], string>> = {
    postgres: {} as never,
    mariadb: {} as never,
  };

  /** The reads compared, as the platform's admin or as one tenant's. */
  const reads = (): [who: "platform" | (typeof TENANTS)[number], path: string][] => {
    const from = new Date(Math.floor(startedAt.getTime() / 3_600_000) * 3_600_000 - 3_600_000).toISOString();
    const to = new Date(Math.floor(startedAt.getTime() / 3_600_000) * 3_600_000 + 2 * 3_600_000).toISOString();
    return [
      // Keys: lookup, search, browse by state, key reuse.
      ["platform", `/api/v1/effects/${enc("settle:INV-102")}?tenant=northwind`],
      ["platform", `/api/v1/effects/${enc("settle:INV-101")}?tenant=northwind`],
      ["platform", `/api/v1/effects/${enc("settle:INV-303")}?tenant=umbrella`],
      ["platform", `/api/v1/effects/${enc("settle:INV-404")}?tenant=stark`],
      ["platform", `/api/v1/effects/${enc("settle:INV-505")}?tenant=umbrella`],
      ["platform", `/api/v1/effects/${enc("mail:welcome-7")}?tenant=umbrella`],
      ["platform", `/api/v1/effects/${enc("mail:reset-3")}?tenant=stark`],
      ["platform", `/api/v1/effects/${enc("mail:digest-9")}?tenant=stark`],
      ["platform", `/api/v1/effects/${enc("label:SHP-7001")}?tenant=northwind`],
      ["platform", `/api/v1/effects/${enc("settle:INV-900")}?tenant=stark`],
      ["platform", `/api/v1/effects/${enc("mail:ancient-1")}?tenant=umbrella`],
      ["platform", `/api/v1/effects/${enc("renew-charge:SUB-42/2026-12")}?tenant=northwind`],
      ["platform", `/api/v1/effects/${enc("renew-ledger:SUB-42/2026-12")}?tenant=northwind`],
      ["northwind", `/api/v1/effects/${enc("settle:INV-101")}`],
      ["northwind", `/api/v1/effects/${enc("settle:INV-303")}`], // another tenant's key: 404 on both
      ["umbrella", `/api/v1/effects/${enc("settle:INV-303")}`],
      ["platform", "/api/v1/effects?q=inv"],
      ["platform", "/api/v1/effects?q=SETTLE:INV-1"],
      ["platform", "/api/v1/effects?q=batch"],
      ["platform", "/api/v1/effects?q=batch&tenant=stark"],
      ["platform", `/api/v1/effects/${enc("batch:\u00e4")}?tenant=umbrella`],
      ["platform", "/api/v1/effects?status=in_progress"],
      ["platform", "/api/v1/effects?status=failed"],
      ["platform", `/api/v1/effects?jobType=${MAIL}`],
      ["platform", "/api/v1/effects?tenant=stark"],
      ["platform", `/api/v1/effects?from=${enc(from)}&to=${enc(to)}&q=settle`],
      ["platform", `/api/v1/effect-states?from=${enc(from)}&to=${enc(to)}&tenant=umbrella`],
      ["northwind", "/api/v1/effects"],
      ["umbrella", "/api/v1/effects?q=inv"],
      ["platform", "/api/v1/effect-states"],
      ["northwind", "/api/v1/effect-states"],
      ["platform", `/api/v1/effect-states?jobType=${SETTLE}`],
      ...(["in_progress", "stuck", "failed", "abandoned", "completed"] as const).map(
        (state) => ["platform", `/api/v1/effect-states/${state}`] as ["platform", string],
      ),
      ["umbrella", "/api/v1/effect-states/stuck"],
      ["platform", `/api/v1/effect-states/failed?tenant=stark&jobType=${MAIL}`],
      ["platform", `/api/v1/effect-states/completed?jobType=${RENEW}`],
      ["platform", `/api/v1/key-reuse-refusals?jobType=${SETTLE}`],
      ["platform", `/api/v1/key-reuse-refusals?jobType=${MAIL}`],
      ["platform", "/api/v1/key-reuse-refusals"],
      ["northwind", "/api/v1/key-reuse-refusals"],
      ["umbrella", "/api/v1/key-reuse-refusals"],
      // Violations: the list, and its groups and totals.
      ["platform", "/api/v1/violations"],
      ["platform", "/api/v1/violations/groups"],
      ["platform", `/api/v1/violations/groups?from=${enc(from)}&to=${enc(to)}`],
      ["platform", `/api/v1/violations?from=${enc(to)}&to=${enc(new Date(Date.parse(to) + 3_600_000).toISOString())}`],
      ["northwind", "/api/v1/violations"],
      ["umbrella", "/api/v1/violations"],
      ["northwind", "/api/v1/violations/groups"],
      ["platform", `/api/v1/violations?jobType=${LABEL}&constraint=same_labels_tracking_key`],
      // The Overview over a fixed range, every tenant and one, one job type.
      ["platform", `/api/v1/overview?from=${enc(from)}&to=${enc(to)}`],
      ["platform", `/api/v1/overview?from=${enc(from)}&to=${enc(to)}&width=400`],
      // Eight days at 6-hour steps: PostgreSQL reads its six-hour level, MySQL its hours.
      [
        "platform",
        `/api/v1/overview?from=${enc(new Date(Date.parse(to) - 8 * 86_400_000).toISOString())}&to=${enc(to)}&width=200`,
      ],
      ["platform", `/api/v1/overview?from=${enc(from)}&to=${enc(to)}&jobType=${SETTLE}`],
      ["platform", `/api/v1/overview?from=${enc(from)}&to=${enc(to)}&tenant=northwind`],
      ["northwind", `/api/v1/overview?from=${enc(from)}&to=${enc(to)}`],
      ["platform", "/api/v1/overview?window=1h"],
      ["platform", `/api/v1/overview?from=${enc(from)}&to=${enc(to)}&jobType=no.such.job`],
      ["umbrella", "/api/v1/overview?window=24h"],
      // Delivery gaps and the advisor.
      ["platform", "/api/v1/gaps"],
      ["platform", "/api/v1/gaps?tenant=northwind"],
      ["northwind", "/api/v1/gaps"],
      ["stark", "/api/v1/gaps"],
      ["platform", "/api/v1/gaps?range=7d"],
      ["platform", `/api/v1/gaps?jobType=${SETTLE}`],
      ["platform", "/api/v1/retention/advice"],
      // Retention and partitions.
      ["platform", "/api/v1/retention"],
      ["platform", "/api/v1/retention/plan"],
      ["platform", "/api/v1/retention/settings"],
      // The Workers panel's restarts, from the starts the workers recorded in the store.
      ["platform", "/api/v1/workers"],
      ["northwind", "/api/v1/retention"],
    ];
  };

  /** Every page of a keyset list, `limit` at a time, as the keys of each page. */
  async function pageThrough(engine: Engine, path: string, field: "effects", limit: number): Promise<string[][]> {
    const out: string[][] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 100; n++) {
      const url = `${path}${path.includes("?") ? "&" : "?"}limit=${limit}${cursor ? `&cursor=${enc(cursor)}` : ""}`;
      const response = await call("GET", url, { authorization: `Bearer ${tokens[engine].platform}` });
      if (response.status !== 200) throw new Error(`${engine} ${url}: ${response.status} ${response.text}`);
      const body = JSON.parse(response.text) as { nextCursor: string | null } & Record<string, { tenant: string; key: string }[]>;
      out.push((body[field] ?? []).map((row) => `${row.tenant}/${row.key}`));
      cursor = body.nextCursor;
      if (!cursor) return out;
    }
    throw new Error(`${engine} ${path}: more than 100 pages`);
  }

  async function answerAll(engine: Engine): Promise<void> {
    for (const who of ["platform", ...TENANTS] as const) {
      tokens[engine][who] = (
        await createToken({ name: `same-${who}`, tenantId: who === "platform" ? null : who, role: "admin" })
      ).secret;
    }
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(answeredAt);
    try {
      for (const [who, path] of reads()) {
        const response = await call("GET", path, { authorization: `Bearer ${tokens[engine][who]}` });
        answers[engine].set(`${who} ${path}`, { status: response.status, body: JSON.parse(response.text) });
      }
      const health = await call("GET", "/api/v1/health");
      answers[engine].set("GET /api/v1/health", { status: health.status, body: JSON.parse(health.text) });
      // Retention's Apply: one maintenance run on the store's own engine, then the page listing it.
      const platform = { authorization: `Bearer ${tokens[engine].platform}` };
      const applied = await call("POST", "/api/v1/retention/apply", platform, {});
      answers[engine].set("platform POST /api/v1/retention/apply", { status: applied.status, body: JSON.parse(applied.text) });
      const after = await call("GET", "/api/v1/retention", platform);
      answers[engine].set("platform GET /api/v1/retention after apply", { status: after.status, body: JSON.parse(after.text) });
      for (const [path, limit] of PAGED) {
        pages[engine].set(`${path} by ${limit}`, await pageThrough(engine, path, "effects", limit));
        pages[engine].set(`${path} whole`, await pageThrough(engine, path, "effects", 200));
      }
    } finally {
      vi.useRealTimers();
    }
  }

  beforeAll(async () => {
    preparedAt = new Date();
    savedDatabaseUrl = process.env.DATABASE_URL;
    process.env.ONCEBOARD_SECRET = "s".repeat(40);
    process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
    process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
    delete process.env.EFFECTS_DATABASE_URL;
    pgDb = await createTestDatabase();
    consoleOnly = await createTestDatabase({ poolSize: 2 });
    // INV-900's effect is moved four days back: PostgreSQL needs a partition there (no default partition).
    await ensureEffectPartitions(pgDb.pool, { back: 6, ahead: 1 });
    scratch = await createMysqlScratchDatabase(mariadbUrl as string, { prefix: "ob_same" });
    myPool = createMysqlEffectsPool({ url: scratch.url, database: scratch.name, statementTimeoutMs: null, max: 10 });
    await migrate(myPool as never, { schema: scratch.name });

    await pgDb.pool.query(`
      CREATE TABLE public.same_labels (tracking text CONSTRAINT same_labels_tracking_key UNIQUE);
      CREATE TABLE public.same_ledger (subscription text, period text, amount int, PRIMARY KEY (subscription, period))`);
    await myPool.query("CREATE TABLE same_labels (tracking VARCHAR(64), CONSTRAINT same_labels_tracking_key UNIQUE (tracking))");
    await myPool.query(
      "CREATE TABLE same_ledger (subscription VARCHAR(64), period VARCHAR(16), amount INT, PRIMARY KEY (subscription, period))",
    );

    sides.push(
      {
        engine: "postgres",
        a: createEffects(workerOptions(pgDb.pool, "onceboard", "a")),
        b: createEffects(workerOptions(pgDb.pool, "onceboard", "b")),
        app: (sql, values) => pgDb.pool.query(sql.pg, values),
      },
      {
        engine: "mariadb",
        a: createEffects(workerOptions(myPool, scratch.name, "a")),
        b: createEffects(workerOptions(myPool, scratch.name, "b")),
        app: (sql, values) => myPool.query(sql.mysql, values),
      },
    );
    for (const side of sides) {
      await side.a.ready();
      await side.b.ready();
    }
    // The workers' /metrics (one process here: the default registry holds both engines' workers),
    // for the Workers panel, which names them from idem_worker_info and counts their restarts from
    // the starts each store recorded.
    metrics = await serveMetrics({ port: 0, host: "127.0.0.1" });
    process.env.WORKER_METRICS_URLS = metrics.url;
    // A minute's rollup row must hold the same steps on both engines: start with room in the minute.
    if (new Date().getSeconds() > 35) await sleep(61_000 - (Date.now() % 60_000));
    startedAt = new Date();
    await writeWorkload(sides);
    finishedAt = new Date();
    answeredAt = new Date(finishedAt.getTime() + 1000);

    await pointConsoleAt(pgDb.url);
    await answerAll("postgres");

    await pointConsoleAt(consoleOnly.url);
    process.env.EFFECTS_DATABASE_URL = scratch.url;
    await closeEffectsMysqlPools();
    await answerAll("mariadb");
    // The workers' heartbeats go on in real time while the console answers at its held clock.
    answersDoneAt = new Date();
  }, 300_000);

  afterAll(async () => {
    delete process.env.WORKER_METRICS_URLS;
    await metrics?.close();
    for (const side of sides) {
      await side.a.close().catch(() => {});
      await side.b.close().catch(() => {});
    }
    delete process.env.EFFECTS_DATABASE_URL;
    await closeEffectsMysqlPools();
    // The console's pools end before their databases are dropped; DATABASE_URL is the run's again.
    await pointConsoleAt(savedDatabaseUrl ?? "");
    if (savedDatabaseUrl === undefined) delete process.env.DATABASE_URL;
    await myPool?.end().catch(() => {});
    await scratch?.drop();
    await pgDb?.drop();
    await consoleOnly?.drop();
  });

  const window = () => ({
    from: preparedAt.getTime() - 2000,
    to: Math.max(answeredAt.getTime(), answersDoneAt.getTime()) + 2000,
  });

  it("answers every read on MariaDB as on PostgreSQL", () => {
    const differences: string[] = [];
    for (const [who, path] of reads()) {
      const onPg = answers.postgres.get(`${who} ${path}`) as Answer;
      const onMy = answers.mariadb.get(`${who} ${path}`) as Answer;
      const expected = { status: onPg.status, body: comparable(onPg.body, window()) };
      const actual = { status: onMy.status, body: comparable(onMy.body, window()) };
      const found = differencesOf(racedOrderBlanked(path, expected), racedOrderBlanked(path, actual));
      if (found.length) differences.push(`${who} GET ${path}\n  ${found.slice(0, 30).join("\n  ")}`);
    }
    expect(differences, differences.join("\n\n")).toEqual([]);
  });

  it.each(PAGED)("pages %s %i at a time to its end in the same order on both, without a repeat or a gap", (path, limit) => {
    const onPg = pages.postgres.get(`${path} by ${limit}`) as string[][];
    const onMy = pages.mariadb.get(`${path} by ${limit}`) as string[][];
    expect(onMy).toEqual(onPg);
    for (const engine of ["postgres", "mariadb"] as const) {
      const paged = (pages[engine].get(`${path} by ${limit}`) as string[][]).flat();
      const whole = (pages[engine].get(`${path} whole`) as string[][]).flat();
      expect(new Set(paged).size, `${engine}: a row on two pages`).toBe(paged.length);
      expect(paged, `${engine}: the pages, joined, are the one-page answer`).toEqual(whole);
      expect(paged.length).toBeGreaterThan(limit);
    }
  });

  it("orders rows made by one statement (one instant) by tenant and key, byte by byte, on both", () => {
    const batch = (pages.mariadb.get("/api/v1/effects?q=batch whole") as string[][]).flat();
    const keys = ["batch:a", "batch:B", "batch:a_1", "batch:a-1", "batch:\u00e4", "batch:b"];
    const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    // Newest first: within the instant, tenant then key descending.
    const expected = ["umbrella", "stark"].flatMap((tenant) =>
      [...keys]
        .sort(bytes)
        .reverse()
        .map((key) => `${tenant}/${key}`),
    );
    expect(batch).toEqual(expected);
  });

  it("shows a tenant's token only its own tenant's rows, on both engines", () => {
    const tenantsNamed = (value: unknown, out = new Set<string>()): Set<string> => {
      if (Array.isArray(value)) for (const v of value) tenantsNamed(v, out);
      else if (value && typeof value === "object") {
        for (const [k, v] of Object.entries(value)) {
          if (k === "tenant" && typeof v === "string") out.add(v);
          else tenantsNamed(v, out);
        }
      }
      return out;
    };
    for (const engine of ["postgres", "mariadb"] as const) {
      for (const [who, path] of reads()) {
        if (who === "platform") continue;
        const answer = answers[engine].get(`${who} ${path}`) as Answer;
        expect(
          [...tenantsNamed(answer.body)].filter((t) => t !== who),
          `${engine} ${who} ${path}`,
        ).toEqual([]);
        const text = JSON.stringify(answer.body);
        for (const other of TENANTS.filter((t) => t !== who)) {
          expect(text.includes(`"${other}"`), `${engine} ${who} ${path} names ${other}`).toBe(false);
        }
      }
      // The other tenant's key is a 404, like a missing one.
      expect(answers[engine].get(`northwind /api/v1/effects/${enc("settle:INV-303")}`)?.status).toBe(404);
    }
  });

  it("read MariaDB for the MariaDB answers: its rollups, and no effects in that console's PostgreSQL", async () => {
    const overview = (engine: Engine) =>
      [...answers[engine].entries()].find(([k]) => k.startsWith("platform /api/v1/overview"))?.[1].body as { source: string };
    expect(overview("postgres").source).toBe("postgres");
    expect(overview("mariadb").source).toBe("mysql");
    // The eight-day answer was drawn at 6-hour steps: on PostgreSQL from worker_stats_6h, so the
    // comparison above held that level against MySQL's hours.
    const steps = [...answers.postgres.entries()]
      .filter(([k]) => k.startsWith("platform /api/v1/overview") && k.endsWith("&width=200"))
      .map(([, a]) => (a.body as { series: { stepSeconds: number } }).series.stepSeconds);
    expect(steps).toEqual([21_600]);
    const { rows } = await consoleOnly.pool.query<{ n: number }>(
      "SELECT (SELECT count(*) FROM effects) + (SELECT count(*) FROM delivery_timeline) + (SELECT count(*) FROM worker_stats_minute) AS n",
    );
    expect(rows[0]?.n).toBe(0);
  });

  it("runs Retention's Apply on each store's engine and lists the run there", () => {
    for (const engine of ["postgres", "mariadb"] as const) {
      const applied = answers[engine].get("platform POST /api/v1/retention/apply") as Answer;
      expect(applied.status, `${engine}: ${JSON.stringify(applied.body)}`).toBe(200);
      expect((applied.body as { result: string }).result, `${engine}: ${JSON.stringify(applied.body)}`).toBe("success");
    }
    // The runs' operations are each layout's own (see partitionLayoutBlanked): who ran it, how, and with what result are compared.
    const runs = (engine: Engine) =>
      (
        (answers[engine].get("platform GET /api/v1/retention after apply") as Answer).body as {
          runs: { runner: string; trigger: string; result: string; error: string | null }[];
        }
      ).runs.map(({ runner, trigger, result, error }) => ({
        // The token's name, and the end of its random secret, which each console database made its own.
        runner: runner.replace(/ \(…[\w-]+\)$/, ""),
        trigger,
        result,
        error,
      }));
    expect(runs("postgres")).toHaveLength(1);
    expect(runs("mariadb")).toEqual(runs("postgres"));
  });

  it("reports the MariaDB store's round trip in the health check, beside PostgreSQL's", () => {
    const onPg = answers.postgres.get("GET /api/v1/health") as Answer;
    const onMy = answers.mariadb.get("GET /api/v1/health") as Answer;
    expect(onPg).toMatchObject({ status: 200, body: { ok: true, effectsStore: null } });
    expect(onMy).toMatchObject({ status: 200, body: { ok: true, effectsStore: { latencyMs: expect.any(Number) } } });
  });

  it("runs the console's maintenance loop on the MariaDB store, recorded in its maintenance_runs", async () => {
    // The console is pointed at MariaDB's effects (the last answers were its).
    const schedule = startConsoleMaintenance();
    expect(schedule).not.toBeNull();
    try {
      const run = await schedule?.runNow();
      expect(run?.result, JSON.stringify(run)).toBe("success");
    } finally {
      await schedule?.stop();
      globalThis.__onceboardMaintenanceSchedule = undefined;
    }
    const [rows] = await myPool.query("SELECT `trigger`, result FROM maintenance_runs WHERE `trigger` = 'schedule'");
    expect((rows as { result: string }[]).map((r) => r.result)).toContain("success");
  });

  it("plans retention on MariaDB over the delivery timeline's day partitions", () => {
    const plan = (answers.mariadb.get("platform /api/v1/retention") as Answer).body as {
      plan: {
        now: string;
        partitions: { name: string; from: string | null; to: string | null; action: string; estimatedRows: number | null }[];
      };
    };
    const now = Date.parse(plan.plan.now);
    const today = plan.plan.partitions.find(
      (p) => p.from !== null && p.to !== null && Date.parse(p.from) <= now && now < Date.parse(p.to) && /^p\d{8}$/.test(p.name),
    );
    expect(today, JSON.stringify(plan.plan.partitions)).toBeDefined();
    expect(today?.action).toBe("keep");
    expect(plan.plan.partitions.filter((p) => p.to !== null && Date.parse(p.to) > now).length).toBeGreaterThanOrEqual(2);
  });

  it("answers the reads with data on PostgreSQL, so the comparison compares something", () => {
    for (const [who, path] of reads()) {
      const answer = answers.postgres.get(`${who} ${path}`) as Answer;
      // Another tenant's key, and the refused ancient message, which made no effect.
      if ((who === "northwind" && path.includes("INV-303")) || path.includes("ancient")) expect(answer.status).toBe(404);
      else expect(answer.status, `${who} ${path}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
  });
});
