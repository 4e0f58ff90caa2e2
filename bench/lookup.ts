import http from "node:http";
import os from "node:os";
import pg from "pg";
import { audit } from "../lib/auth/audit";
import { Scope } from "../lib/auth/scope";
import { createToken, findActiveToken } from "../lib/auth/tokens";
import { findFreePort } from "../lib/db/free-port";
import { ensureEffectPartitions } from "../lib/db/partitions";
import { getPool } from "../lib/db/pool";
import { createPrismaClient, getPrisma } from "../lib/db/prisma";
import { getEffect } from "../lib/features/keys-and-effects/get-effect";
import { searchEffects } from "../lib/features/keys-and-effects/search-effects";
import { defaultLogger } from "../lib/idempotency";
import { maintain } from "../lib/idempotency/admin";
import { hasProductionBuild, serveConsole } from "../scripts/next-server";
import { benchChoice, benchNumber } from "./env";
import { benchDatabase, machine, timedGet } from "./support";

/**
 * `npm run bench:lookup`: p95 of GET /api/v1/effects/{key} and of a fragment search, over HTTP
 * against `next start`, with BENCH_LOOKUP_ROWS effect rows (default 10,000,000) over 30 daily
 * partitions and 1,000 tenants, seeded with INSERT … SELECT generate_series, one statement per day.
 * Needs a production build (npm run build). Then the same questions in process, one phase at a
 * time (token lookup, the read model, the audit insert) and two requests that stop early (the
 * proxy's 401, an authenticated 400), so the HTTP numbers can be split into where the time goes.
 * Two consoles answer in turn on the same database (BENCH_LOOKUP_COMPARE=0: only the second):
 * `before`, the request path without its in-process shortcuts (ONCEBOARD_AUTH_CACHE_MS=0,
 * ONCEBOARD_RATE_LIMIT_SHARE=1, ONCEBOARD_DIRECT_API=off: through Next.js's router), and `after`,
 * the defaults.
 * Last line: lookup p95_ms=<n> search_p95_ms=<n> [before_p95_ms=<n> before_search_p95_ms=<n>] rows=<n>.
 */
const log = (line: string) => process.stdout.write(`bench:lookup: ${line}\n`);
const ROWS = benchNumber("BENCH_LOOKUP_ROWS", 10_000_000, { integer: true });
const DAYS = 30;
const TENANTS = 1000;
const LOOKUPS = benchNumber("BENCH_LOOKUP_REQUESTS", 400, { integer: true });
const SEARCHES = benchNumber("BENCH_LOOKUP_SEARCHES", 150, { integer: true });
const COMPARE = benchChoice("BENCH_LOOKUP_COMPARE", ["1", "0"]) === "1";

function p95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))]! * 10) / 10;
}

async function main() {
  if (!hasProductionBuild()) throw new Error("no production build: run `npm run build` first");
  const db = await benchDatabase(log);
  const client = new pg.Client(db.sqlUrl);
  await client.connect();
  const servers: Awaited<ReturnType<typeof serveConsole>>[] = [];
  try {
    await ensureEffectPartitions(client, { back: DAYS, ahead: 1 });
    const perDay = Math.ceil(ROWS / DAYS);
    const started = Date.now();
    // The console's retention maintenance runs when it starts: with the default 7 days it would
    // drop 23 of the 30 seeded days before the first request.
    await client.query("UPDATE retention_settings SET retention_days = $1 WHERE id = 1", [DAYS + 5]);
    for (let day = 0; day < DAYS; day++) {
      // Day d is the (d + 1)th day before today: 30 whole days in the past, none after now (a key
      // lookup does not look past now).
      // Row i of day d: tenant t<i % 1000>, key <step>:ord-<d>-<i / 3>; three steps of an order share a message id.
      await client.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, first_message_id, last_message_id,
                              outcome, created_at, updated_at, completed_at, duplicate_count)
         SELECT 't' || (i % ${TENANTS}),
                (ARRAY['capture','mark-paid','receipt'])[1 + (i / ${TENANTS}) % 3] || ':ord-' || $1::int || '-' || (i / ${TENANTS * 3}) || '-' || (i % ${TENANTS}),
                (ARRAY['capture-payment','mark-paid','send-receipt'])[1 + (i / ${TENANTS}) % 3],
                'completed', 'external', 1,
                'msg-' || $1::int || '-' || (i / ${TENANTS * 3}) || '-' || (i % ${TENANTS}),
                'msg-' || $1::int || '-' || (i / ${TENANTS * 3}) || '-' || (i % ${TENANTS}),
                '{"ok":true}'::jsonb,
                ts, ts, ts, (i % 7 = 0)::int
           FROM generate_series(0, $2::int - 1) AS i,
                LATERAL (SELECT date_trunc('day', now()) - (($1::int + 1) * interval '1 day') + (i * interval '1 millisecond') * (86400000.0 / $2::int) AS ts) t`,
        [day, perDay],
      );
      const seconds = (Date.now() - started) / 1000;
      log(
        `seeded day ${day + 1}/${DAYS} (${((day + 1) * perDay).toLocaleString("en-US")} rows, ${Math.round(seconds)} s, ${Math.round(((day + 1) * perDay) / seconds).toLocaleString("en-US")} rows/s)`,
      );
    }
    // As in production, where maintenance indexes each partition once it has closed: the Keys
    // index exists on the 30 past days (none on today's). Before the server starts, whose own
    // maintenance run would otherwise build them while the requests are measured.
    const maintenancePool = new pg.Pool({ connectionString: db.sqlUrl, max: 1 });
    try {
      const indexing = Date.now();
      const run = await maintain(maintenancePool, { trigger: "bench", logger: defaultLogger("bench-lookup", "warn") });
      if (run.result !== "success") throw new Error(`maintenance failed: ${run.error}`);
      const built = run.operations.filter((o) => o.kind === "index" && o.result === "ok").length;
      log(`maintenance built the Keys index on ${built} closed partitions in ${Math.round((Date.now() - indexing) / 1000)} s`);
    } finally {
      await maintenancePool.end();
    }
    log("VACUUM ANALYZE effects");
    await client.query("VACUUM ANALYZE effects");
    const { rows: count } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM effects");
    const rows = count[0]?.n ?? 0;

    process.env.DATABASE_URL = db.url;
    const token = (await createToken({ name: "bench", tenantId: null, role: "viewer" })).secret;
    await getPrisma().$disconnect();
    await getPool().end();

    // Two consoles on the same database, asked in turn: `before` with the request path as it was
    // (every request reads its token and counts itself in PostgreSQL, and goes through Next.js's
    // router: ONCEBOARD_AUTH_CACHE_MS=0, ONCEBOARD_RATE_LIMIT_SHARE=1, ONCEBOARD_DIRECT_API=off),
    // `after` with the defaults; BENCH_LOOKUP_COMPARE=0 runs `after` alone.
    const sharedEnv = {
      DATABASE_URL: db.url,
      ONCEBOARD_RATE_LIMIT_PER_MINUTE: "1000000",
      ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
      ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE: "1000000",
      ONCEBOARD_SECRET: "b".repeat(40),
    };
    const variants: { name: string; env: Record<string, string>; base: string }[] = [];
    const wanted: { name: string; env: Record<string, string> }[] = COMPARE
      ? [
          {
            name: "before",
            env: { ONCEBOARD_AUTH_CACHE_MS: "0", ONCEBOARD_RATE_LIMIT_SHARE: "1", ONCEBOARD_DIRECT_API: "off" },
          },
          { name: "after", env: {} },
        ]
      : [{ name: "after", env: {} }];
    for (const variant of wanted) {
      const port = await findFreePort();
      servers.push(
        await serveConsole({ mode: "start", port, env: { ...sharedEnv, ...variant.env, PORT: String(port) }, quiet: true }),
      );
      variants.push({ ...variant, base: `http://127.0.0.1:${port}` });
    }
    const headers = { authorization: `Bearer ${token}` };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    const timed = async (url: string, want: number) => {
      const { status, ms } = await timedGet(agent, url, headers);
      if (status !== want) throw new Error(`${url} answered ${status}`);
      return ms;
    };
    // Numbers on a shared machine measure its queue as much as the request: say how busy it was.
    const load = () =>
      os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(" ");
    log(`load average before measuring: ${load()}`);
    // Warm up the servers and the plan caches.
    for (const { base } of variants)
      for (let i = 0; i < 20; i++)
        await timed(`${base}/api/v1/effects/${encodeURIComponent(`capture:ord-0-0-${i}`)}?tenant=t${i}`, 200);

    const lookups = new Map(variants.map((v) => [v.name, [] as number[]]));
    for (let n = 0; n < LOOKUPS; n++) {
      const day = n % DAYS;
      const tenant = (n * 7919) % TENANTS;
      const order = (n * 104729) % Math.floor(perDay / (TENANTS * 3));
      const path = `/api/v1/effects/${encodeURIComponent(`mark-paid:ord-${day}-${order}-${tenant}`)}?tenant=t${tenant}`;
      // In turn, the order swapped each time: neither console always follows the other.
      for (const v of n % 2 === 0 ? variants : [...variants].reverse())
        lookups.get(v.name)!.push(await timed(`${v.base}${path}`, 200));
      if ((n + 1) % 100 === 0)
        log(
          `${n + 1}/${LOOKUPS} lookups, p95 so far ${variants.map((v) => `${v.name} ${p95(lookups.get(v.name)!)} ms`).join(", ")}`,
        );
    }
    const searches = new Map(variants.map((v) => [v.name, [] as number[]]));
    for (let n = 0; n < SEARCHES; n++) {
      const tenant = (n * 7919) % TENANTS;
      const day = n % DAYS;
      // An order-id fragment: finds that order's three steps within the tenant.
      const path = `/api/v1/effects?tenant=t${tenant}&q=${encodeURIComponent(`ord-${day}-${n % 50}-${tenant}`)}`;
      for (const v of n % 2 === 0 ? variants : [...variants].reverse())
        searches.get(v.name)!.push(await timed(`${v.base}${path}`, 200));
      if ((n + 1) % 50 === 0)
        log(
          `${n + 1}/${SEARCHES} searches, p95 so far ${variants.map((v) => `${v.name} ${p95(searches.get(v.name)!)} ms`).join(", ")}`,
        );
    }
    const after = { lookup: p95(lookups.get("after")!), search: p95(searches.get("after")!) };
    const before = COMPARE ? { lookup: p95(lookups.get("before")!), search: p95(searches.get("before")!) } : null;
    for (const v of variants)
      log(`HTTP ${v.name}: lookup p95 ${p95(lookups.get(v.name)!)} ms, search p95 ${p95(searches.get(v.name)!)} ms`);
    log("now the phases");
    for (const v of variants) await phases({ name: v.name, base: v.base, headers, token, url: db.sqlUrl, perDay });
    log(`machine: ${machine()}; PostgreSQL ${db.serverVersion} (${db.where}); load average after: ${load()}`);
    const baseline = before ? ` before_p95_ms=${before.lookup} before_search_p95_ms=${before.search}` : "";
    process.stdout.write(`lookup p95_ms=${after.lookup} search_p95_ms=${after.search}${baseline} rows=${rows}\n`);
  } finally {
    for (const server of servers) server.kill("SIGTERM");
    await client.end().catch(() => {});
    await db.close();
  }
}

/**
 * Where a request's time goes: each phase of GET /effects/{key} and of a search, run in this
 * process against the same database (the server's pool is another process; these share nothing
 * with it but PostgreSQL), and two requests that end early, for the cost of Next.js and the proxy.
 */
async function phases(input: {
  name: string;
  base: string;
  headers: Record<string, string>;
  token: string;
  url: string;
  perDay: number;
}) {
  const { base, headers, token, perDay } = input;
  const runs = Math.min(LOOKUPS, 200);
  const orders = Math.floor(perDay / (TENANTS * 3));
  const pool = new pg.Pool({ connectionString: input.url, max: 1 });
  const prisma = createPrismaClient(pool);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const bare = async (url: string, requestHeaders: Record<string, string>, want: number) => {
    const { status, ms } = await timedGet(agent, url, requestHeaders);
    if (status !== want) throw new Error(`${url} answered ${status}`);
    return ms;
  };
  // The same lookup through fetch (undici), for comparison with the HTTP numbers above.
  const viaFetch = async (url: string) => {
    const t = performance.now();
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    return performance.now() - t;
  };
  const measure = async (name: string, op: (n: number) => Promise<unknown>) => {
    for (let n = 0; n < 5; n++) await op(n);
    const samples: number[] = [];
    for (let n = 0; n < runs; n++) {
      const t = performance.now();
      await op(n);
      samples.push(performance.now() - t);
    }
    return `${name} ${p95(samples)}`;
  };
  const principal = {
    tokenId: (await findActiveToken(token, prisma))!.id,
    actor: "bench",
    tenantId: null,
    role: "viewer" as const,
  };
  try {
    const parts = [
      await measure("http_401_no_token", () => bare(`${base}/api/v1/effects/x?tenant=t1`, {}, 401)),
      await measure("http_400_after_auth", () => bare(`${base}/api/v1/effects?tenant=t1&from=yesterday`, headers, 400)),
      await measure("http_lookup_via_fetch", (n) =>
        viaFetch(
          `${base}/api/v1/effects/${encodeURIComponent(`mark-paid:ord-${(n + 3) % DAYS}-${(n * 104729) % orders}-${(n * 7919) % TENANTS}`)}?tenant=t${(n * 7919) % TENANTS}`,
        ),
      ),
      await measure("token_lookup", () => findActiveToken(token, prisma)),
      await measure("get_effect", (n) =>
        getEffect(
          Scope.operator(),
          {
            tenant: `t${(n * 7919) % TENANTS}`,
            key: `mark-paid:ord-${(n + 7) % DAYS}-${(n * 104729) % orders}-${(n * 7919) % TENANTS}`,
          },
          pool,
        ),
      ),
      await measure("search", (n) =>
        searchEffects(
          Scope.operator(),
          { tenant: `t${(n * 7919) % TENANTS}`, q: `ord-${(n + 11) % DAYS}-${n % 50}-${(n * 7919) % TENANTS}`, limit: 50 },
          pool,
        ),
      ),
      await measure("audit_insert", () =>
        audit({ principal, action: "effect.read", tenantId: "t1", target: "bench", result: "ok", ip: "127.0.0.1" }, pool),
      ),
    ];
    log(`phases (${input.name}), p95 ms over ${runs} runs each: ${parts.join(", ")}`);
  } finally {
    await pool.end();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench:lookup: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
