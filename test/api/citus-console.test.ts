import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { auditsWithinRead } from "../../lib/console/effects-store";
import { consolePoolConfig } from "../../lib/db/pool";
import { getPrisma } from "../../lib/db/prisma";
import { runBulkActions } from "../../lib/features/bulk-actions/bulk-runner";
import { KEYS_SEED } from "../../lib/features/keys-and-effects/testing/seed-keys";
import { GAPS_SEED_EXPECTED } from "../../lib/features/retention-and-gaps/testing/seed-gaps";
import { findTestCitus } from "../../lib/idempotency/test/citus-cluster";
import {
  type CitusConsoleDatabase,
  createCitusConsoleDatabase,
  PARTITIONS_BACK,
  pointConsoleAt,
  seedConsoleWorkload,
  tenantsByWorker,
} from "../citus-database";
import { createTestDatabase, type TestDatabase } from "../database";
import { callDocumented as call } from "./harness";

/**
 * The console on Citus (docs/scaling.md): the same workload — the Keys, gaps, Overview and
 * reconciliation seeds, tenants acme and globex on one worker and initech on the other — seeded
 * into one PostgreSQL and into a database on a Citus cluster (CITUS_URL) set up as
 * `npm run db:migrate -- --citus` sets one up, and every /api/v1 read answered by the route
 * handlers in-process (withAuth, zod, the read models, the JSON out; no `next build`) on both. The
 * answers must be the same, apart from the times and ids each seed made. Then the release, the one
 * write the console makes to effects, on both workers. Without CITUS_URL it skips loudly.
 */
const citusUrl = await findTestCitus();
const { orderId } = KEYS_SEED;
const enc = encodeURIComponent;
const CAPTURE = `capture:${orderId}`;

/** Every documented read, as a platform admin (all tenants: the fan-out queries) and as one tenant's admin. */
const READS: [who: "platform" | "acme", path: string][] = [
  ["platform", "/api/v1/health"],
  ["platform", "/api/v1/overview"],
  ["platform", "/api/v1/overview?window=7d"],
  ["acme", "/api/v1/overview"],
  ["platform", `/api/v1/effects?q=${orderId}`],
  ["platform", "/api/v1/effects?q=capture"],
  ["platform", "/api/v1/effects?status=in_progress"],
  ["acme", `/api/v1/effects?q=${orderId}`],
  ["platform", `/api/v1/effects?q=${orderId}&tenant=globex`],
  ["platform", `/api/v1/effects/${enc(CAPTURE)}?tenant=acme`],
  ["acme", `/api/v1/effects/${enc(KEYS_SEED.takeoverKey)}`],
  ["platform", `/api/v1/effects/${enc("capture:order-77")}?tenant=initech`],
  ["platform", "/api/v1/gaps"],
  ["acme", "/api/v1/gaps"],
  ["platform", "/api/v1/violations"],
  ["acme", "/api/v1/violations"],
  ["platform", "/api/v1/workers"],
  ["platform", "/api/v1/retention"],
  ["platform", "/api/v1/retention/plan"],
  ["platform", "/api/v1/retention/settings"],
  ["platform", "/api/v1/retention/advice"],
  ["platform", "/api/v1/retention/advice/preview"],
  ["platform", "/api/v1/reconciliation/runs"],
  ["platform", "/api/v1/reconciliation/findings"],
  ["acme", "/api/v1/reconciliation/findings"],
  ["platform", "/api/v1/audit"],
  ["platform", "/api/v1/tokens"],
  ["platform", "/api/v1/sessions"],
];

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * Fields that differ between two seedings of one workload by construction: keyset cursors carry
 * times and row numbers; ages and durations run on between the two answers; tokens' secrets are random.
 */
const PER_SEEDING = new Set([
  "nextCursor",
  "cursor",
  "prevCursor",
  "generatedAt",
  "now",
  "ageSeconds",
  "overdueSeconds",
  "durationSeconds",
  "suffix",
  "actor",
  "latencyMs",
  // A partition's size on disk: on Citus its 32 shards' (checked on its own below), not one table's.
  "bytes",
]);

/** An answer with what each seeding makes its own (times, ids, cursors) blanked, for comparing two databases. */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, PER_SEEDING.has(k) && v !== null ? "<per seeding>" : comparable(v)]),
    );
  }
  if (typeof value === "string" && (ISO_TIME.test(value) || UUID.test(value))) return "<time or id>";
  return value;
}

interface Answer {
  status: number;
  body: unknown;
}

/**
 * Every read, with the console's clock (Date) held at `at` for both databases: the Overview's
 * buckets and the windows are cut from it, so the two answers cover the same minutes.
 */
async function answerAll(tokens: { platform: string; acme: string }, at: Date): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(at);
  try {
    for (const [who, path] of READS) {
      const response = await call("GET", path, { authorization: `Bearer ${tokens[who]}` });
      answers.set(`${who} ${path}`, { status: response.status, body: JSON.parse(response.text) });
    }
  } finally {
    vi.useRealTimers();
  }
  return answers;
}

describe.skipIf(!citusUrl)("the console on a Citus cluster (CITUS_URL)", () => {
  let plain: TestDatabase;
  let citus: CitusConsoleDatabase;
  let citusPool: pg.Pool;
  let onOneServer: Map<string, Answer>;
  let onCitus: Map<string, Answer>;
  let tokens: { platform: string; acme: string };

  beforeAll(async () => {
    process.env.ONCEBOARD_SECRET = "c".repeat(40);
    process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
    process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
    const seededAt = new Date();
    const answeredAt = new Date(seededAt.getTime() + 60_000);
    plain = await createTestDatabase();
    await pointConsoleAt(plain.url);
    onOneServer = await answerAll(await seedConsoleWorkload(plain.pool, seededAt), answeredAt);

    citus = await createCitusConsoleDatabase(citusUrl as string, { back: PARTITIONS_BACK });
    citusPool = new pg.Pool(
      consolePoolConfig({
        connectionString: citus.url,
        schema: "onceboard",
        statementTimeoutMs: null,
        max: 5,
        application_name: "onceboard-test",
      }),
    );
    citusPool.on("error", () => {});
    await pointConsoleAt(citus.url);
    tokens = await seedConsoleWorkload(citusPool, seededAt);
    onCitus = await answerAll(tokens, answeredAt);
  }, 600_000);
  afterAll(async () => {
    await getPrisma()
      .$disconnect()
      .catch(() => {});
    await citusPool?.end();
    await citus?.drop();
    await plain?.drop();
  });

  it("the workload's tenants sit on both workers", async () => {
    const ports = await tenantsByWorker(citusPool, ["acme", "globex", "initech"]);
    expect(new Set(ports.values())).toEqual(new Set(citus.workerPorts));
    const { rows } = await citusPool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_dist_partition WHERE logicalrelid = 'onceboard.effects'::regclass",
    );
    expect(rows[0]?.n).toBe(1);
  });

  it.each(READS)("%s GET %s answers on Citus as on one server", (who, path) => {
    const one = onOneServer.get(`${who} ${path}`) as Answer;
    const distributed = onCitus.get(`${who} ${path}`) as Answer;
    expect(one.status).toBe(200);
    expect(distributed.status, JSON.stringify(distributed.body)).toBe(200);
    expect(comparable(distributed.body)).toEqual(comparable(one.body));
  });

  it("writes a key read's audit row after the read on Citus, in the read's own statement on one server", async () => {
    // The audit rows themselves are compared above (GET /api/v1/audit): the same on both.
    expect(await auditsWithinRead(citusPool)).toBe(false);
    expect(await auditsWithinRead(plain.pool)).toBe(true);
  });

  it("the cross-tenant reads find rows on both workers", () => {
    const gaps = onCitus.get("platform /api/v1/gaps")?.body as { effectsMaxGapKey?: string; topTenant?: string };
    expect(JSON.stringify(gaps)).toContain(GAPS_SEED_EXPECTED.effectsMaxGapKey);
    const search = JSON.stringify(onCitus.get("platform /api/v1/effects?q=capture")?.body);
    // acme and globex on one worker, initech on the other.
    for (const tenant of ["acme", "globex", "initech"]) expect(search).toContain(`"${tenant}"`);
  });

  it("the retention page sizes each partition by its shards on the workers, not the coordinator's empty table", async () => {
    const response = await call("GET", "/api/v1/retention/plan", { authorization: `Bearer ${tokens.platform}` });
    expect(response.status, response.text).toBe(200);
    const partitions = (JSON.parse(response.text) as { partitions: { name: string; bytes: number }[] }).partitions;
    const { rows } = await citusPool.query<{ name: string; bytes: number }>(
      `SELECT c.relname AS name, sum(s.shard_size)::float8 AS bytes
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN citus_shards s ON s.table_name = c.oid
        WHERE i.inhparent = 'onceboard.effects'::regclass GROUP BY c.relname`,
    );
    expect(partitions.length).toBeGreaterThan(PARTITIONS_BACK);
    expect(Object.fromEntries(partitions.map((p) => [p.name, p.bytes]))).toEqual(
      Object.fromEntries(rows.map((r) => [r.name, r.bytes])),
    );
  });

  it("releases a stuck claim on Citus, with its audit row; refusals are explained, never a 500", async () => {
    const as = { authorization: `Bearer ${tokens.platform}` };
    const released = await call("POST", `/api/v1/effects/${enc(KEYS_SEED.stuckKey)}/release?tenant=acme`, as);
    expect(released.status, released.text).toBe(200);
    expect(JSON.parse(released.text)).toMatchObject({ released: true, status: "failed" });
    const { rows } = await citusPool.query(
      "SELECT status, lease_until, error FROM effects WHERE tenant_id = 'acme' AND key = $1",
      [KEYS_SEED.stuckKey],
    );
    expect(rows).toEqual([
      expect.objectContaining({ status: "failed", lease_until: null, error: expect.stringMatching(/^released by .* expired$/) }),
    ]);
    const again = await call("POST", `/api/v1/effects/${enc(KEYS_SEED.stuckKey)}/release?tenant=acme`, as);
    expect(again.status, again.text).toBe(409);
    expect(JSON.parse(again.text).error.message).toContain("not in progress");
    const atMostOnce = await call("POST", `/api/v1/effects/${enc(KEYS_SEED.stuckAtMostOnceKey)}/release?tenant=acme`, as);
    expect(atMostOnce.status, atMostOnce.text).toBe(409);
    const missing = await call("POST", `/api/v1/effects/${enc("capture:nothing-here")}/release?tenant=initech`, as);
    expect(missing.status, missing.text).toBe(404);
    const audit = await citusPool.query<{ result: string }>(
      "SELECT result FROM audit_log WHERE action = 'effect.release' ORDER BY seq",
    );
    expect(audit.rows.map((r) => r.result)).toEqual(["ok", "not_in_progress", "at_most_once", "not_found"]);
  });

  it("a bulk release on the other worker: each item's transaction writes the console's tables, then releases there", async () => {
    const keys = ["stuck:bulk-1", "stuck:bulk-2", "stuck:bulk-3"];
    for (const key of keys) {
      await citusPool.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, created_at, updated_at)
         VALUES ('initech', $1, 'capture-payment', 'in_progress', 'external', 1, 'w', now() - interval '1 minute',
                 date_trunc('milliseconds', now()) - interval '2 hours', now() - interval '2 hours')`,
        [key],
      );
    }
    const as = { authorization: `Bearer ${tokens.platform}` };
    const dry = await call("POST", "/api/v1/bulk/release", as, { tenant: "initech", q: "stuck:bulk", dryRun: true });
    expect(dry.status, dry.text).toBe(200);
    expect(JSON.parse(dry.text)).toMatchObject({ count: keys.length });
    const started = await call("POST", "/api/v1/bulk/release", as, { tenant: "initech", q: "stuck:bulk" });
    expect(started.status, started.text).toBe(202);
    const { action } = JSON.parse(started.text) as { action: { id: string } };
    await runBulkActions({ owner: "citus-test" });
    const { rows: state } = await citusPool.query("SELECT state, applied FROM bulk_actions WHERE id = $1", [action.id]);
    expect(state[0]).toMatchObject({ state: "done", applied: keys.length });
    const { rows } = await citusPool.query(
      "SELECT key, status FROM effects WHERE tenant_id = 'initech' AND key = ANY($1) ORDER BY key",
      [keys],
    );
    expect(rows).toEqual(keys.map((key) => ({ key, status: "failed" })));
  });
});
