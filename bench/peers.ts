/**
 * npm run bench:peers — Onceboard `once` beside what a user would pick instead, in one process,
 * alternating rounds, the same number of calls in flight for every contender:
 *
 * - raw `INSERT … ON CONFLICT DO NOTHING` (a row, nothing else),
 * - Onceboard `effects.once` (claim, body, stored outcome),
 * - DBOS: a workflow started with a `workflowID` (`@dbos-inc/dbos-sdk`), awaited for its result,
 * - graphile-worker `addJob` with a `jobKey`, in `unsafe_dedupe` and in `replace` (the default) mode,
 * - pg-boss 10 `send` with a `singletonKey` on a queue with the deduping `short` policy,
 * - Powertools for AWS Lambda idempotency (`makeIdempotent`) on Redis (its cache persistence layer).
 *
 * For each: fresh keys per second, duplicates per second (a key already done — or, for the queues,
 * still queued, the only state in which they dedupe), commits per operation (the pg_stat_database
 * xact_commit delta of the contender's own database over the phase) and the 50-way race: 50 calls
 * with one key at once (how many times the body ran, what the other callers got), then one more
 * call after the first finished (what a repeat after completion does). The queues' bodies run in a
 * worker after the enqueue, so their rates are enqueue rates (the body is not in them).
 *
 * Env: DATABASE_URL (else an embedded PostgreSQL), REDIS_URL (redis://127.0.0.1:6379),
 * BENCH_SECONDS (2 per phase), BENCH_ROUNDS (5), BENCH_CONCURRENCY (16).
 * Last line: `peers once_per_s=… raw_per_s=… once_ratio=… dup_ratio=… best_durable_peer_ratio=…`
 * (best_durable_peer_ratio: `once` fresh against the fastest peer with the same guarantee, DBOS).
 */

import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { IdempotencyConfig, makeIdempotent } from "@aws-lambda-powertools/idempotency";
import { CachePersistenceLayer } from "@aws-lambda-powertools/idempotency/cache";
import { DBOS } from "@dbos-inc/dbos-sdk";
import { createClient } from "@redis/client";
import { makeWorkerUtils, runOnce } from "graphile-worker";
import pg from "pg";
import PgBoss from "pg-boss";
import { createScratchDatabase, type ScratchDatabase } from "../lib/db/scratch";
import { benchNumber } from "./env";
import { RAW_INSERT, RAW_TABLE } from "./raw-insert";
import { benchDatabase, benchEffects, machine, runFor } from "./support";

const SECONDS = benchNumber("BENCH_SECONDS", 2);
const ROUNDS = benchNumber("BENCH_ROUNDS", 5, { integer: true });
const CONCURRENCY = benchNumber("BENCH_CONCURRENCY", 16, { integer: true });
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const DUP_KEYS = 2000;
const RACERS = 50;
/** The race's body takes this long, so the 50 calls really overlap it. */
const RACE_BODY_MS = 50;
/** Operations per contender and phase in the pass that counts commits. */
const COMMIT_OPS = 2000;
/** PostgreSQL 15 backends report their counters within about 10 s of going idle. */
const STATS_SETTLE_MS = 11_000;
const log = (line: string) => console.log(`[bench:peers] ${line}`);
/** Keys unique to this run: Redis and the peers' tables are not scratch. */
const RUN = `${process.pid}-${Date.now().toString(36)}`;

interface RaceReport {
  bodyRuns: number;
  others: string;
  repeat: string;
}

interface Contender {
  name: string;
  guarantees: string;
  /** The database whose xact_commit counts this contender's commits; null when not PostgreSQL. */
  database: string | null;
  fresh(key: string): Promise<unknown>;
  duplicate(key: string): Promise<unknown>;
  /** Makes `keys` done (or queued) so that duplicate() finds them. */
  prepare(keys: string[]): Promise<void>;
  race(key: string): Promise<RaceReport>;
}

/** "49 × duplicate with outcome, 1 × in flight": how many callers got each answer. */
function tally(answers: string[]): string {
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([a, n]) => `${n} × ${a}`)
    .join(", ");
}

async function main() {
  log(`machine: ${machine()}; ${CONCURRENCY} in flight, ${ROUNDS} rounds of ${SECONDS}s per phase`);
  const database = await benchDatabase(log);
  const adminUrl = database.adminUrl;
  const extra = await Promise.all(
    // Each contender in its own database, so that one pg_stat_database row counts its commits.
    ["raw", "dbos", "graphile_unsafe_dedupe", "graphile_replace", "pgboss"].map((p) =>
      createScratchDatabase(adminUrl, { prefix: `onceboard_peers_${p}` }),
    ),
  );
  const [rawDb, dbosDb, graphileDedupeDb, graphileReplaceDb, bossDb] = extra as ScratchDatabase[] as [
    ScratchDatabase,
    ScratchDatabase,
    ScratchDatabase,
    ScratchDatabase,
    ScratchDatabase,
  ];
  const admin = new pg.Pool({ connectionString: adminUrl, max: 1 });
  // The server's connections are shared (max_connections): the benchmark's own pools let idle
  // connections go between phases, so only the contender being measured holds its 16.
  const pool = new pg.Pool({ connectionString: database.sqlUrl, max: CONCURRENCY, idleTimeoutMillis: 1000 });
  pool.on("error", () => {});
  const rawPool = new pg.Pool({ connectionString: rawDb.url, max: CONCURRENCY, idleTimeoutMillis: 1000 });
  rawPool.on("error", () => {});
  const onceboardDb = new URL(database.url).pathname.slice(1);
  const effects = benchEffects(pool);
  // The same library with coalescing off (each claim and completion its own round trip): before/after in one run.
  const uncoalesced = benchEffects(pool, { coalesce: false });
  const redis = createClient({ url: REDIS_URL });
  redis.on("error", () => {});
  let boss: PgBoss | null = null;
  let dbosLaunched = false;
  const stops: (() => Promise<unknown>)[] = [];

  try {
    await rawPool.query(RAW_TABLE);
    const rawInsert = (key: string) => rawPool.query({ ...RAW_INSERT, values: ["bench", key, "o", `m-${key}`] });

    // DBOS: one registered workflow; its body counts runs per key for the race.
    const dbosRuns = new Map<string, number>();
    const dbosWorkflow = DBOS.registerWorkflow(
      async (key: string, delayMs: number) => {
        dbosRuns.set(key, (dbosRuns.get(key) ?? 0) + 1);
        if (delayMs > 0) await sleep(delayMs);
        return { charged: key };
      },
      { name: "peersCharge" },
    );
    DBOS.setConfig({
      name: "onceboard-bench-peers",
      systemDatabaseUrl: dbosDb.url,
      systemDatabasePoolSize: CONCURRENCY + 4,
      logLevel: "error",
    });
    await DBOS.launch();
    dbosLaunched = true;
    const dbosRun = async (key: string, delayMs = 0) => {
      const handle = await DBOS.startWorkflow(dbosWorkflow, { workflowID: key })(key, delayMs);
      return handle.getResult();
    };

    // graphile-worker, one database per jobKeyMode: utils for addJob; the body runs in runOnce.
    const graphileRuns = new Map<string, number>();
    const graphileFor = async (db: ScratchDatabase, mode: "unsafe_dedupe" | "replace") => {
      const utils = await makeWorkerUtils({ connectionString: db.url });
      stops.push(async () => utils.release());
      await utils.migrate();
      return {
        add: async (key: string) => (await utils.addJob("peers_charge", { key }, { jobKey: key, jobKeyMode: mode })).id,
        drain: () =>
          runOnce({
            connectionString: db.url,
            concurrency: 4,
            noHandleSignals: true,
            taskList: {
              peers_charge: async (payload) => {
                const key = (payload as { key: string }).key;
                graphileRuns.set(key, (graphileRuns.get(key) ?? 0) + 1);
              },
            },
          }),
      };
    };
    const graphile = {
      unsafe_dedupe: await graphileFor(graphileDedupeDb, "unsafe_dedupe"),
      replace: await graphileFor(graphileReplaceDb, "replace"),
    };

    // pg-boss 10: a queue whose `short` policy keeps one queued job per singletonKey.
    boss = new PgBoss({ connectionString: bossDb.url, supervise: false, schedule: false });
    boss.on("error", () => {});
    await boss.start();
    const bossQueue = "peers_charge";
    await boss.createQueue(bossQueue, { name: bossQueue, policy: "short" });
    const bossRef = boss;
    const bossRuns = new Map<string, number>();
    const bossSend = (key: string) => bossRef.send(bossQueue, { key }, { singletonKey: key });

    // Powertools idempotency on Redis, keyed by the event's `key`. Outside Lambda it warns on each
    // in-progress record that it cannot tell the remaining time (it sets no in-progress expiry
    // then): counted and reported once instead of printed per call.
    let noLambdaContextWarnings = 0;
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (String(args[0]).startsWith("Could not determine remaining time left")) noLambdaContextWarnings++;
      else warn(...args);
    };
    stops.push(async () => {
      console.warn = warn;
    });
    await redis.connect();
    const powertoolsRuns = new Map<string, number>();
    let powertoolsDelay = 0;
    const powertools = makeIdempotent(
      async (event: { key: string }) => {
        powertoolsRuns.set(event.key, (powertoolsRuns.get(event.key) ?? 0) + 1);
        if (powertoolsDelay > 0) await sleep(powertoolsDelay);
        return { charged: event.key };
      },
      {
        persistenceStore: new CachePersistenceLayer({ client: redis }),
        config: new IdempotencyConfig({ eventKeyJmesPath: "key", expiresAfterSeconds: 900 }),
      },
    );

    const onceRuns = new Map<string, number>();
    const onceWith =
      (lib: typeof effects) =>
      (key: string, delayMs = 0) =>
        lib.once({ tenant: "bench", key, jobType: "bench", messageId: `m-${key}`, wait: "10s" }, async () => {
          onceRuns.set(key, (onceRuns.get(key) ?? 0) + 1);
          if (delayMs > 0) await sleep(delayMs);
          return { charged: key };
        });
    const onceCall = onceWith(effects);
    const onceOffCall = onceWith(uncoalesced);

    const settle = async <T>(calls: Promise<T>[], answerOf: (value: T) => string) =>
      (await Promise.allSettled(calls)).map((r) =>
        r.status === "fulfilled" ? answerOf(r.value) : `error ${(r.reason as Error)?.name ?? "?"}`,
      );

    const queueRace = async (
      enqueue: (key: string) => Promise<unknown>,
      drain: () => Promise<unknown>,
      runs: Map<string, number>,
      key: string,
    ): Promise<RaceReport> => {
      const ids = await Promise.allSettled(Array.from({ length: RACERS }, () => enqueue(key)));
      const jobIds = new Set(ids.flatMap((r) => (r.status === "fulfilled" && r.value != null ? [String(r.value)] : [])));
      const answers = ids.map((r) =>
        r.status === "rejected" ? `error ${(r.reason as Error)?.name ?? "?"}` : r.value == null ? "deduped (null)" : "a job id",
      );
      await drain();
      const afterRace = runs.get(key) ?? 0;
      const repeat = await settle([enqueue(key)], (id) => (id === null || id === undefined ? "deduped" : "a new job"));
      await drain();
      const again = (runs.get(key) ?? 0) - afterRace;
      return {
        bodyRuns: afterRace,
        others: `${tally(answers)} (${jobIds.size} distinct job${jobIds.size === 1 ? "" : "s"})`,
        repeat: `${repeat[0]}; the body ran ${again === 0 ? "not again" : `${again} more time${again === 1 ? "" : "s"}`}`,
      };
    };

    const contenders: Contender[] = [
      {
        name: "raw `INSERT … ON CONFLICT DO NOTHING`",
        guarantees: "a row; no outcome, no lease, no recovery",
        database: rawDb.name,
        fresh: rawInsert,
        duplicate: async (key) => {
          const r = await rawInsert(key);
          if (r.rowCount !== 0) throw new Error("raw duplicate inserted");
        },
        prepare: async (keys) => {
          for (const k of keys) await rawInsert(k);
        },
        async race(key) {
          const answers = await settle(
            Array.from({ length: RACERS }, () => rawInsert(key)),
            (r) => (r.rowCount === 1 ? "the row (runs the body)" : "no row, no outcome"),
          );
          const repeat = await rawInsert(key);
          return {
            bodyRuns: answers.filter((a) => a.startsWith("the row")).length,
            others: tally(answers),
            repeat: repeat.rowCount === 0 ? "no row, no outcome" : "inserted again",
          };
        },
      },
      ...(
        [
          ["Onceboard `once`", onceCall],
          ["Onceboard `once`, coalescing off", onceOffCall],
        ] as const
      ).map(
        ([name, call]): Contender => ({
          name,
          guarantees: "durable claim, stored outcome, leases and takeover, key reuse caught; body once in the race",
          database: onceboardDb,
          fresh: (key) => call(key),
          duplicate: async (key) => {
            const r = await call(key);
            if (!r.duplicate) throw new Error("once ran a duplicate");
          },
          prepare: async (keys) => {
            await runKeys(keys, (k) => call(k));
          },
          async race(key) {
            const answers = await settle(
              Array.from({ length: RACERS }, () => call(key, RACE_BODY_MS)),
              (r) => (r.duplicate ? "the stored outcome (duplicate)" : "ran the body"),
            );
            const repeat = await call(key);
            return {
              bodyRuns: onceRuns.get(key) ?? 0,
              others: tally(answers),
              repeat: repeat.duplicate ? "the stored outcome; the body did not run" : "ran the body again",
            };
          },
        }),
      ),
      {
        name: "DBOS workflow with `workflowID`",
        guarantees: "durable workflow, its result and step outputs; body once in the race",
        database: dbosDb.name,
        fresh: (key) => dbosRun(key),
        duplicate: (key) => dbosRun(key),
        prepare: async (keys) => {
          await runKeys(keys, (k) => dbosRun(k));
        },
        async race(key) {
          const answers = await settle(
            Array.from({ length: RACERS }, () => dbosRun(key, RACE_BODY_MS)),
            (r) => ((r as { charged?: string })?.charged === key ? "the workflow's result" : "another result"),
          );
          const before = dbosRuns.get(key) ?? 0;
          await dbosRun(key);
          const again = (dbosRuns.get(key) ?? 0) - before;
          return {
            bodyRuns: before,
            others: tally(answers),
            repeat: again === 0 ? "the stored result; the body did not run" : "ran the body again",
          };
        },
      },
      ...(["unsafe_dedupe", "replace"] as const).map(
        (mode): Contender => ({
          name: `graphile-worker \`addJob\` with \`jobKey\` (\`${mode}\`)`,
          guarantees:
            mode === "unsafe_dedupe"
              ? "enqueue dedupe while the job row exists (queued or running); runs again after it"
              : "one pending job per key (each add replaces its payload and run_at); runs again after it",
          database: mode === "unsafe_dedupe" ? graphileDedupeDb.name : graphileReplaceDb.name,
          fresh: (key) => graphile[mode].add(key),
          duplicate: (key) => graphile[mode].add(key),
          prepare: async (keys) => {
            await runKeys(keys, (k) => graphile[mode].add(k));
          },
          race: (key) => queueRace(graphile[mode].add, graphile[mode].drain, graphileRuns, key),
        }),
      ),
      {
        name: "pg-boss 10 `send` with `singletonKey` (`short` policy)",
        guarantees: "enqueue dedupe while a job is queued; runs again once it is active or done",
        database: bossDb.name,
        fresh: (key) => bossSend(key),
        duplicate: async (key) => {
          if ((await bossSend(key)) !== null) throw new Error("pg-boss queued a duplicate");
        },
        prepare: async (keys) => {
          await runKeys(keys, (k) => bossSend(k));
        },
        race: (key) =>
          queueRace(
            bossSend,
            async () => {
              for (;;) {
                const jobs = await bossRef.fetch<{ key: string }>(bossQueue, { batchSize: 100 });
                if (jobs.length === 0) return;
                for (const job of jobs) bossRuns.set(job.data.key, (bossRuns.get(job.data.key) ?? 0) + 1);
                await bossRef.complete(
                  bossQueue,
                  jobs.map((j) => j.id),
                );
              }
            },
            bossRuns,
            key,
          ),
      },
      {
        name: "Powertools idempotency on Redis",
        guarantees: "a cached result for the expiry; not durable (Redis), no lease recovery outside Lambda",
        database: null,
        fresh: (key) => powertools({ key }),
        duplicate: (key) => powertools({ key }),
        prepare: async (keys) => {
          await runKeys(keys, (k) => powertools({ key: k }));
        },
        async race(key) {
          powertoolsDelay = RACE_BODY_MS;
          try {
            const answers = await settle(
              Array.from({ length: RACERS }, () => powertools({ key })),
              (r) => ((r as { charged?: string })?.charged === key ? "the result" : "another result"),
            );
            const before = powertoolsRuns.get(key) ?? 0;
            powertoolsDelay = 0;
            await powertools({ key });
            const again = (powertoolsRuns.get(key) ?? 0) - before;
            return {
              bodyRuns: before,
              others: tally(answers),
              repeat: again === 0 ? "the cached result; the body did not run" : "ran the body again",
            };
          } finally {
            powertoolsDelay = 0;
          }
        },
      },
    ];

    log(`preparing ${DUP_KEYS} done (or queued) keys per contender for the duplicate phase`);
    // Made once: built per call, the 2,000 keys cost every duplicate ~100 µs of the benchmark's own
    // time, which held every contender's duplicate rate near 5,000/s (the figures before 2026-12-03).
    const dupKeyLists = contenders.map((_, c) => Array.from({ length: DUP_KEYS }, (_, k) => `charge:dup-${RUN}-${c}-${k}`));
    const dupKeys = (c: number) => dupKeyLists[c] as string[];
    for (const [c, contender] of contenders.entries()) {
      await contender.prepare(dupKeys(c));
      await contender.fresh(`charge:warm-${RUN}-${c}`);
    }

    const totals = contenders.map(() => ({ fresh: { ops: 0, s: 0 }, dup: { ops: 0, s: 0 } }));
    const op = (c: number, phase: "fresh" | "dup", tag: string) => (w: number, i: number) => {
      const contender = contenders[c] as Contender;
      return phase === "fresh"
        ? contender.fresh(`charge:fresh-${RUN}-${tag}-${c}-${w}-${i}`)
        : contender.duplicate(dupKeys(c)[(w * 7919 + i * 13) % DUP_KEYS] as string);
    };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const phase of ["fresh", "dup"] as const) {
        const line: string[] = [];
        for (const [c, contender] of contenders.entries()) {
          const r = await runFor(CONCURRENCY, SECONDS, op(c, phase, `r${round}`));
          const t = totals[c]?.[phase];
          if (!t) continue;
          t.ops += r.ops;
          t.s += r.ops / r.perSecond;
          line.push(`${contender.name.split(" ")[0]} ${r.perSecond.toFixed(0)}/s`);
        }
        log(`round ${round} ${phase}: ${line.join(", ")}`);
      }
    }

    // Commits per operation: a counted pass of COMMIT_OPS operations per contender and phase, each
    // contender in its own database. A backend reports its counters to pg_stat_database within
    // about 10 s of going idle (PostgreSQL 15), so each snapshot waits that out; background work of
    // a peer (its pollers) is counted too — it is part of what the peer costs.
    const commitsOf = async (): Promise<Map<string, number>> => {
      await sleep(STATS_SETTLE_MS);
      const { rows } = await admin.query<{ datname: string; n: string }>(
        "SELECT datname, xact_commit AS n FROM pg_stat_database WHERE datname = ANY($1::text[])",
        [contenders.map((c) => c.database).filter((d) => d !== null)],
      );
      return new Map(rows.map((r) => [r.datname, Number(r.n)]));
    };
    const commitsPerOp = contenders.map(() => ({ fresh: Number.NaN, dup: Number.NaN }));
    // Contenders that share a database (`once` with coalescing on and off) are counted in passes of
    // their own: one pass over both would charge each with the other's commits too.
    const passes: number[][] = [];
    for (const [c, contender] of contenders.entries()) {
      if (contender.database === null) continue;
      const free = passes.find((pass) => pass.every((other) => contenders[other]?.database !== contender.database));
      if (free) free.push(c);
      else passes.push([c]);
    }
    log(
      `counting commits: ${COMMIT_OPS} operations per contender and phase, in ${passes.length} pass(es), ${STATS_SETTLE_MS / 1000}s for the counters`,
    );
    let snapshot = await commitsOf();
    for (const phase of ["fresh", "dup"] as const) {
      for (const pass of passes) {
        for (const c of pass) await runCount(COMMIT_OPS, op(c, phase, "commits"));
        const next = await commitsOf();
        for (const c of pass) {
          const database = contenders[c]?.database;
          const row = commitsPerOp[c];
          if (!row || !database) continue;
          row[phase] = ((next.get(database) ?? 0) - (snapshot.get(database) ?? 0)) / COMMIT_OPS;
        }
        snapshot = next;
      }
    }

    log(`the ${RACERS}-way race (body ${RACE_BODY_MS} ms) and a repeat after completion`);
    const races: RaceReport[] = [];
    for (const [c, contender] of contenders.entries()) {
      const report = await contender.race(`charge:race-${RUN}-${c}`);
      races.push(report);
      log(`race ${contender.name}: body ran ${report.bodyRuns}×; callers: ${report.others}; repeat: ${report.repeat}`);
    }
    log(`Powertools warned ${noLambdaContextWarnings} times: no Lambda context, so no in-progress expiry`);
    const load = os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ");

    console.log("");
    console.log(
      `| contender | fresh /s | duplicate /s | commits per fresh | commits per duplicate | ${RACERS}-way race: body ran | the other callers got | a repeat after completion | what it guarantees |`,
    );
    console.log("|---|---:|---:|---:|---:|---:|---|---|---|");
    const rate = (t: { ops: number; s: number }) => (t.s > 0 ? t.ops / t.s : 0);
    for (const [c, contender] of contenders.entries()) {
      const t = totals[c];
      const race = races[c];
      if (!t || !race) continue;
      const perOp = (phase: "fresh" | "dup") =>
        contender.database === null ? "n/a (Redis)" : (commitsPerOp[c]?.[phase] ?? Number.NaN).toFixed(2);
      console.log(
        `| ${contender.name} | ${rate(t.fresh).toFixed(0)} | ${rate(t.dup).toFixed(0)} | ${perOp("fresh")} | ${perOp("dup")} | ${race.bodyRuns} | ${race.others} | ${race.repeat} | ${contender.guarantees} |`,
      );
    }
    console.log("");
    log(`load average ${load}; PostgreSQL ${database.serverVersion} (${database.where})`);
    const [raw, onceT, onceOffT, dbosT] = totals;
    if (!raw || !onceT || !onceOffT || !dbosT) throw new Error("missing totals");
    log(
      `coalescing: once fresh ${(rate(onceT.fresh) / rate(onceOffT.fresh)).toFixed(3)}× and duplicates ${(rate(onceT.dup) / rate(onceOffT.dup)).toFixed(3)}× of coalescing off, same run`,
    );
    const oncePerS = rate(onceT.fresh);
    const rawPerS = rate(raw.fresh);
    console.log(
      `peers once_per_s=${oncePerS.toFixed(0)} raw_per_s=${rawPerS.toFixed(0)} once_ratio=${(oncePerS / rawPerS).toFixed(3)} dup_ratio=${(rate(onceT.dup) / rate(raw.dup)).toFixed(3)} best_durable_peer_ratio=${(oncePerS / rate(dbosT.fresh)).toFixed(3)}`,
    );
  } finally {
    await effects.close().catch(() => {});
    await uncoalesced.close().catch(() => {});
    if (dbosLaunched) await DBOS.shutdown().catch(() => {});
    await boss?.stop({ graceful: false, wait: true }).catch(() => {});
    for (const stop of stops) await stop().catch(() => {});
    if (redis.isOpen) await redis.close().catch(() => {});
    await pool.end().catch(() => {});
    await rawPool.end().catch(() => {});
    await admin.end().catch(() => {});
    for (const d of extra) await d.drop().catch(() => {});
    await database.close();
  }
}

/** Runs `op` `count` times in all, CONCURRENCY in flight. */
async function runCount(count: number, op: (worker: number, i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next < count) await op(worker, next++);
    }),
  );
}

/** Runs `fn` over `keys` with CONCURRENCY in flight. */
async function runKeys(keys: string[], fn: (key: string) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < keys.length) {
        const key = keys[next++] as string;
        await fn(key);
      }
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
