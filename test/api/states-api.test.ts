import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken } from "../../lib/auth/tokens";
import { ensureEffectPartitions } from "../../lib/db/partitions";
import { getPrisma } from "../../lib/db/prisma";
import { KEYS_SEED, KEYS_SEED_DAYS_BACK, seedKeys } from "../../lib/features/keys-and-effects/testing/seed-keys";
import { STATES_SEED, seedStates } from "../../lib/features/keys-and-effects/testing/seed-states";
import { OPENAPI } from "../../lib/routes/openapi";
import { createTestDatabase, type TestDatabase } from "../database";
import { callDocumented as call } from "./harness";

/**
 * Browse by state through the API, in process, on real PostgreSQL with real tokens: each tenant's
 * token counts and lists its own tenant's effects only (whatever ?tenant= says), the platform's
 * every tenant's or the one it names; each count is the rows its list pages through; a failed
 * effect shows its error (redacted) and attempts; a bad query is a 400 naming the field; the
 * document describes each route.
 */
type Counts = { tenant: string | null; states: { state: string; count: number }[]; total: number; keyReuse: number };
type List = {
  tenant: string | null;
  effects: { tenant: string; key: string; error: string | null; attempts: number }[];
  nextCursor: string | null;
};
type Refusals = {
  tenant: string | null;
  refusals: { tenant: string; key: string; messageId: string | null }[];
  nextCursor: string | null;
};

describe("browse by state: /api/v1/effect-states, /api/v1/effect-states/{state}, /api/v1/key-reuse-refusals", () => {
  let db: TestDatabase;
  const tokens: Record<string, string> = {};
  beforeAll(async () => {
    db = await createTestDatabase();
    process.env.DATABASE_URL = db.url;
    process.env.ONCEBOARD_SECRET = "m".repeat(40);
    process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
    process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
    await ensureEffectPartitions(db.pool, { back: KEYS_SEED_DAYS_BACK + 1, ahead: 1 });
    await seedKeys(db.pool);
    await seedStates(db.pool);
    for (const [name, tenantId] of [
      ["acme", "acme"],
      ["globex", "globex"],
      ["platform", null],
    ] as const)
      tokens[name] = (await createToken({ name: `states ${name}`, tenantId, role: "viewer" })).secret;
  });
  afterAll(async () => {
    await getPrisma().$disconnect();
    await db.drop();
  });

  const as = (who: string) => ({ authorization: `Bearer ${tokens[who]}` });
  const get = async <T>(who: string, path: string): Promise<T> => {
    const response = await call("GET", path, as(who));
    expect(response.status, `${who} ${path}: ${response.text}`).toBe(200);
    return JSON.parse(response.text) as T;
  };
  const countOf = (counts: Counts, state: string) => counts.states.find((s) => s.state === state)?.count;

  /** Every row of a list, through its cursors, `limit` at a time. */
  async function pageThrough<T extends { nextCursor: string | null }>(who: string, path: string, rows: (page: T) => unknown[]) {
    const all: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: T = await get<T>(who, `${path}${path.includes("?") ? "&" : "?"}limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      all.push(...rows(page));
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  }

  it("a tenant's token counts and lists its own tenant only, whatever ?tenant= says", async () => {
    for (const [who, other] of [
      ["acme", "globex"],
      ["globex", "acme"],
    ] as const) {
      for (const path of ["/api/v1/effect-states", `/api/v1/effect-states?tenant=${other}`]) {
        const counts = await get<Counts>(who, path);
        expect(counts.tenant).toBe(who);
      }
      const failed = await get<List>(who, `/api/v1/effect-states/failed?tenant=${other}`);
      expect(failed.effects.map((e) => e.key)).toContain(STATES_SEED.failedKey(who));
      expect(failed.effects.every((e) => e.tenant === who)).toBe(true);
      const refusals = await get<Refusals>(who, `/api/v1/key-reuse-refusals?tenant=${other}`);
      expect(refusals.refusals.map((r) => r.messageId).sort()).toEqual([...STATES_SEED.reusedMessageIds(who)].sort());
      for (const state of ["in_progress", "stuck", "failed", "abandoned", "completed"]) {
        const response = await call("GET", `/api/v1/effect-states/${state}?tenant=${other}&limit=200`, as(who));
        expect(response.text, `${who} ${state}`).not.toContain(`st-${other}`);
        expect(response.text).not.toMatch(/GLOBEX|ch_e2e_1/);
      }
    }
  });

  it("every count is the rows its list pages through, for a tenant, the platform and the platform naming one", async () => {
    for (const [who, query] of [
      ["acme", ""],
      ["platform", ""],
      ["platform", "?tenant=globex"],
      ["platform", `?jobType=${STATES_SEED.jobType}`],
    ] as const) {
      const counts = await get<Counts>(who, `/api/v1/effect-states${query}`);
      let total = 0;
      for (const { state, count } of counts.states) {
        const rows = await pageThrough<List>(who, `/api/v1/effect-states/${state}${query}`, (p) => p.effects);
        expect(rows.length, `${who}${query} ${state}`).toBe(count);
        total += count;
      }
      expect(counts.total).toBe(total);
      const refusals = await pageThrough<Refusals>(who, `/api/v1/key-reuse-refusals${query}`, (p) => p.refusals);
      expect(refusals.length, `${who}${query} key reuse`).toBe(counts.keyReuse);
    }
    // The tenant's own figures: the seeds' failed, abandoned, live and completed rows, and the Keys seed's two stuck claims.
    const acme = await get<Counts>("acme", "/api/v1/effect-states");
    expect(countOf(acme, "stuck")).toBe(2);
    expect(countOf(acme, "in_progress")).toBe(1);
    expect(countOf(acme, "abandoned")).toBe(1);
    expect(acme.keyReuse).toBe(2);
    // Every tenant looks back 7 days: the Keys seed (10 days old) is outside it, the States seed inside.
    const platform = await get<Counts>("platform", "/api/v1/effect-states");
    expect(platform.tenant).toBeNull();
    expect(countOf(platform, "failed")).toBe(2);
    expect(countOf(platform, "stuck")).toBe(0);
    expect(platform.keyReuse).toBe(4);
  });

  it("a failed effect shows the library's error, redacted, and its attempts; the list read is audited", async () => {
    const failed = await get<List>("acme", `/api/v1/effect-states/failed?jobType=${STATES_SEED.jobType}`);
    expect(failed.effects).toEqual([
      expect.objectContaining({
        key: STATES_SEED.failedKey("acme"),
        attempts: STATES_SEED.failedAttempts,
        error: STATES_SEED.failedErrorShown,
      }),
    ]);
    const abandoned = await get<List>("acme", "/api/v1/effect-states/abandoned");
    expect(abandoned.effects).toEqual([
      expect.objectContaining({ key: STATES_SEED.abandonedKey("acme"), error: STATES_SEED.abandonedError, attempts: 2 }),
    ]);
    const stuck = await get<List>("acme", "/api/v1/effect-states/stuck");
    expect(stuck.effects.map((e) => e.key).sort()).toEqual([KEYS_SEED.stuckKey, KEYS_SEED.stuckAtMostOnceKey].sort());
    const { rows } = await db.pool.query(
      "SELECT tenant_id, actor, detail FROM audit_log WHERE action = 'effect.search' ORDER BY id DESC LIMIT 1",
    );
    expect(rows).toEqual([
      { tenant_id: "acme", actor: expect.stringMatching(/^states acme/), detail: { state: "stuck", results: 2, jobType: null } },
    ]);
  });

  it("a bad query is a 400 naming the field, never a 500", async () => {
    const cases: [string, string][] = [
      ["/api/v1/effect-states/bogus", "state"],
      ["/api/v1/effect-states?from=yesterday", "from"],
      ["/api/v1/effect-states?from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", "from"],
      ["/api/v1/effect-states/failed?limit=0", "limit"],
      ["/api/v1/effect-states/failed?cursor=garbage", "cursor"],
      ["/api/v1/key-reuse-refusals?limit=201", "limit"],
      ["/api/v1/key-reuse-refusals?jobType=a%00b", "jobType"],
      ["/api/v1/violations/groups?to=later", "to"],
    ];
    for (const [path, field] of cases) {
      const response = await call("GET", path, as("platform"));
      expect(response.status, `${path}: ${response.text}`).toBe(400);
      const error = JSON.parse(response.text).error as { code: string; message: string };
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.message, path).toContain(field);
    }
    // Another list's cursor: the failed list's on the refusals, one tenant's on every tenant's.
    const page = await get<List>("platform", "/api/v1/effect-states/failed?tenant=acme&limit=1");
    const foreign = await call("GET", `/api/v1/key-reuse-refusals?cursor=${page.nextCursor ?? "x"}`, as("platform"));
    const everyTenant = await call("GET", `/api/v1/effect-states/failed?cursor=${page.nextCursor ?? "x"}`, as("platform"));
    for (const response of [foreign, everyTenant]) {
      expect(response.status).toBe(400);
      expect(response.text).toContain("cursor");
    }
  });

  it("the violations' totals are per tenant too", async () => {
    const acme = JSON.parse((await call("GET", "/api/v1/violations/groups?tenant=globex", as("acme"))).text);
    expect(acme.tenant).toBe("acme");
    expect(acme.groups.length).toBeGreaterThan(0);
    expect(acme.groups.every((g: { tenant: string }) => g.tenant === "acme")).toBe(true);
    const list = JSON.parse((await call("GET", "/api/v1/violations?limit=200", as("acme"))).text);
    expect(acme.total).toBe(list.violations.length);
  });

  it("the OpenAPI document describes each route with its parameters", () => {
    const paths = OPENAPI.paths as Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    const names = (path: string) => (paths[path]?.get?.parameters ?? []).map((p) => `${p.in}:${p.name}`).sort();
    expect(names("/api/v1/effect-states")).toEqual(["query:from", "query:jobType", "query:tenant", "query:to"]);
    expect(names("/api/v1/effect-states/{state}")).toEqual(
      ["path:state", "query:cursor", "query:from", "query:jobType", "query:limit", "query:tenant", "query:to"].sort(),
    );
    expect(names("/api/v1/key-reuse-refusals")).toContain("query:cursor");
    expect(names("/api/v1/violations/groups")).toContain("query:constraint");
  });
});
