import fc from "fast-check";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { assertPagesExactlyOnce, type ListUnderTest } from "../../console/testing/keyset-property";
import { ensureEffectPartitions } from "../../db/partitions";
import { createEffects } from "../../idempotency";
import { EffectKeyReuseError } from "../../idempotency/errors";
import { EFFECT_STATUSES } from "../../idempotency/states";
import { countEffectStates, listEffectsInState } from "./effect-states";
import { listKeyReuseRefusals } from "./key-reuse-refusals";
import type { StateFilter } from "./state-filter";
import { EFFECT_STATES, type EffectState, effectStateOf } from "./states-types";

/**
 * Browse by state against PostgreSQL: each effect is in exactly the state the library's own rule
 * (isStuck) puts it in, every count is the number of rows its list pages through with the same
 * filter, the lists page by keyset (every row once, in order), and the key-reuse refusals are
 * those the real library recorded.
 */
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const platform = Scope.ofPrincipal({ tenantId: null });
const acme = Scope.ofPrincipal({ tenantId: "acme" });

/** Pages through one state's list to its end, `limit` at a time; each row's own state must be the list's. */
async function pageThrough(
  db: TestDatabase,
  scope: Scope,
  filter: StateFilter & { state: EffectState },
  limit: number,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await listEffectsInState(scope, { ...filter, cursor, limit }, db.pool);
    for (const e of page.effects) {
      expect(e.state).toBe(filter.state);
      seen.push(`${e.tenant}/${e.key}`);
    }
    cursor = page.nextCursor ?? undefined;
    if (++pages > 500) throw new Error("the pages never end");
  } while (cursor);
  return seen;
}

const seedRow = fc.record({
  tenant: fc.constantFrom("acme", "globex"),
  jobType: fc.constantFrom("capture", "receipt"),
  status: fc.constantFrom(...EFFECT_STATUSES),
  // The lease's boundary included: ending exactly now is stuck (lease_until <= now).
  leaseOffset: fc.option(fc.constantFrom(-86_400_000, -1, 0, 1, 86_400_000), { nil: null }),
  age: fc.integer({ min: 0, max: 3 }).map((n) => n * 600),
});

describe("browse by state", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { back: 2, ahead: 1, now: NOW });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("every effect is in the one state the library's isStuck gives it, and each count is the rows its list pages through", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(seedRow, { minLength: 0, maxLength: 30 }),
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom<{ scope: Scope; tenant?: string; jobType?: string; from?: Date }>(
          { scope: platform },
          { scope: acme },
          // A tenant's token asking for another's: its own, whatever it says.
          { scope: acme, tenant: "globex" },
          { scope: platform, tenant: "globex", jobType: "receipt" },
          // A window that leaves the oldest out.
          { scope: platform, from: new Date(NOW.getTime() - 1_500_000) },
        ),
        async (rows, limit, { scope, ...filter }) => {
          await db.pool.query("DELETE FROM effects");
          await db.pool.query(
            `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, lease_until, error, created_at, updated_at)
             SELECT r.tenant, 'k-' || n, r.job_type, r.status, 'external', 'w-' || n,
                    CASE WHEN r.lease IS NULL THEN NULL ELSE $2::timestamptz + r.lease * interval '1 millisecond' END,
                    CASE WHEN r.status IN ('failed', 'abandoned') THEN 'boom ' || n END,
                    $2::timestamptz - r.age * interval '1 second', $2::timestamptz
               FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (tenant text, job_type text, status text, lease bigint, age int))
                    WITH ORDINALITY AS r(tenant, job_type, status, lease, age, n)`,
            [
              JSON.stringify(
                rows.map((r) => ({ tenant: r.tenant, job_type: r.jobType, status: r.status, lease: r.leaseOffset, age: r.age })),
              ),
              NOW,
            ],
          );
          // The oracle: the library's rule in JavaScript, over the rows the filter holds.
          const tenant = scope.platform ? (filter.tenant ?? null) : "acme";
          const expected = new Map<EffectState, string[]>(EFFECT_STATES.map((s) => [s, []]));
          rows.forEach((r, i) => {
            if (tenant !== null && r.tenant !== tenant) return;
            if (filter.jobType && r.jobType !== filter.jobType) return;
            if (filter.from && NOW.getTime() - r.age * 1000 < filter.from.getTime()) return;
            const leaseUntil = r.leaseOffset === null ? null : new Date(NOW.getTime() + r.leaseOffset);
            expected.get(effectStateOf({ status: r.status, leaseUntil }, NOW))?.push(`${r.tenant}/k-${i + 1}`);
          });

          const counts = await countEffectStates(scope, { ...filter, now: NOW }, db.pool);
          expect(counts.tenant).toBe(tenant);
          expect(counts.states.map((s) => s.state)).toEqual([...EFFECT_STATES]);
          let total = 0;
          for (const { state, count } of counts.states) {
            const paged = await pageThrough(db, scope, { ...filter, state, now: NOW }, limit);
            expect(paged.length, `${state}: the count and the rows paged through`).toBe(count);
            expect([...paged].sort(), state).toEqual([...(expected.get(state) ?? [])].sort());
            total += count;
          }
          expect(counts.total).toBe(total);
          expect(total).toBe([...expected.values()].flat().length);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("a failed effect carries its error, redacted, and its attempts; a claim its owner and lease", async () => {
    await db.pool.query("DELETE FROM effects");
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, error, created_at, updated_at)
       VALUES ('acme', 'capture:ord-1', 'capture', 'failed', 'external', 3, 'w-1', NULL,
               'card declined for ada@example.com', $1, $1),
              ('acme', 'capture:ord-2', 'capture', 'in_progress', 'external', 2, 'w-2', $1::timestamptz - interval '1 minute', NULL, $1, $1)`,
      [new Date(NOW.getTime() - 60_000)],
    );
    const failed = await listEffectsInState(acme, { state: "failed", limit: 10, now: NOW }, db.pool);
    expect(failed.effects).toEqual([
      expect.objectContaining({
        key: "capture:ord-1",
        state: "failed",
        attempts: 3,
        error: "card declined for [email]",
        owner: null,
        leaseUntil: null,
      }),
    ]);
    const stuck = await listEffectsInState(acme, { state: "stuck", limit: 10, now: NOW }, db.pool);
    expect(stuck.effects).toEqual([
      expect.objectContaining({ key: "capture:ord-2", state: "stuck", status: "in_progress", attempts: 2, owner: "w-2" }),
    ]);
  });

  it("a cursor of another list is refused naming the cursor", async () => {
    await db.pool.query("DELETE FROM effects");
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, updated_at)
       SELECT 'acme', 'k-' || n, 'capture', 'completed', 'external', $1, $1 FROM generate_series(1, 3) n`,
      [new Date(NOW.getTime() - 60_000)],
    );
    const tenantPage = await listEffectsInState(acme, { state: "completed", limit: 1, now: NOW }, db.pool);
    expect(tenantPage.nextCursor).toBeTruthy();
    // One tenant's cursor on every tenant's list, and the key-reuse list's.
    await expect(
      listEffectsInState(platform, { state: "completed", limit: 1, cursor: tenantPage.nextCursor ?? "", now: NOW }, db.pool),
    ).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
    await expect(
      listKeyReuseRefusals(acme, { limit: 1, cursor: tenantPage.nextCursor ?? "", now: NOW }, db.pool),
    ).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
  });

  let keys = 0;
  const stateList = (state: EffectState, scope: Scope): ListUnderTest => ({
    async reset(d) {
      await d.pool.query("DELETE FROM effects");
    },
    async insert(d, times) {
      const names = times.map(() => `key-${(++keys * 7919) % 1000}-${keys}`);
      // Both tenants, and beside each row one of another state at the same instant: the list holds its own state's alone.
      const [status, lease] = state === "stuck" ? ["in_progress", new Date(NOW.getTime() - 1000)] : [state, null];
      await d.pool.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, lease_until, created_at, updated_at)
         SELECT tenant, k || s.suffix, 'capture', s.status, 'external', s.lease, t, t
           FROM unnest($1::text[], $2::timestamptz[]) AS u(k, t), unnest(ARRAY['acme', 'globex']) AS tenant,
                (VALUES ('', $3::text, $4::timestamptz), ('-other', 'completed', NULL)) AS s(suffix, status, lease)`,
        [names, times, status, lease],
      );
      return scope.platform ? names.flatMap((n) => [`acme/${n}`, `globex/${n}`]) : names.map((n) => `acme/${n}`);
    },
    async page(d, limit, cursor) {
      const list = await listEffectsInState(scope, { state, limit, cursor, now: NOW }, d.pool);
      return { ids: list.effects.map((e) => `${e.tenant}/${e.key}`), nextCursor: list.nextCursor };
    },
    async declaredOrder(d) {
      const { rows } = await d.pool.query<{ rid: string }>(
        scope.platform
          ? "SELECT tenant_id || '/' || key AS rid FROM effects ORDER BY created_at DESC, tenant_id DESC, key DESC"
          : "SELECT tenant_id || '/' || key AS rid FROM effects WHERE tenant_id = 'acme' ORDER BY created_at DESC, key DESC",
      );
      return rows.map((r) => r.rid);
    },
  });

  it("a state's list of one tenant pages every row once, newest created first, then the key", async () => {
    await assertPagesExactlyOnce(db, stateList("stuck", acme));
  });
  it("a state's list of every tenant pages every row once, newest created first, then tenant and key", async () => {
    await assertPagesExactlyOnce(db, stateList("failed", platform));
  });

  describe("deliveries refused for key reuse", () => {
    it("lists what the real library recorded: the refused message, its worker, never another tenant's or a served delivery", async () => {
      await db.pool.query("TRUNCATE delivery_timeline");
      const effects = createEffects({
        db: db.pool,
        registry: new Registry(),
        logger: pino({ level: "silent" }),
        rollups: false,
        register: false,
        flushInterval: 0,
        workerId: "worker-7",
      });
      const once = (tenant: string, messageId: string, cents: number) =>
        effects.once({ tenant, key: "pay:p-1", jobType: "pay", messageId, payload: { cents } }, () => cents);
      await once("acme", "m-1", 100);
      await once("acme", "m-1", 100); // a duplicate: answered, not refused
      await expect(once("acme", "m-2", 200)).rejects.toBeInstanceOf(EffectKeyReuseError);
      await expect(once("acme", "m-3", 300)).rejects.toBeInstanceOf(EffectKeyReuseError);
      await once("globex", "g-1", 1);
      await expect(once("globex", "g-2", 2)).rejects.toBeInstanceOf(EffectKeyReuseError);
      await effects.close();

      const list = await listKeyReuseRefusals(acme, { limit: 10 }, db.pool);
      expect(list.tenant).toBe("acme");
      expect(list.refusals.map((r) => [r.tenant, r.key, r.jobType, r.messageId, r.worker])).toEqual([
        ["acme", "pay:p-1", "pay", "m-3", "worker-7"],
        ["acme", "pay:p-1", "pay", "m-2", "worker-7"],
      ]);
      const counts = await countEffectStates(acme, {}, db.pool);
      expect(counts.keyReuse).toBe(2);
      const every = await listKeyReuseRefusals(platform, { limit: 10 }, db.pool);
      expect(every.refusals.map((r) => r.messageId).sort()).toEqual(["g-2", "m-2", "m-3"]);
      expect((await countEffectStates(platform, { jobType: "other" }, db.pool)).keyReuse).toBe(0);
    });

    it("reads a chunk's shared columns (one element for every delivery) and counts what it pages", async () => {
      await db.pool.query("TRUNCATE delivery_timeline");
      const at = (s: number) => new Date(NOW.getTime() - 3_600_000 + s * 1000);
      // One chunk of three later deliveries of acme: tenant, job type, worker and attempts shared; two refused.
      await db.pool.query(
        `INSERT INTO delivery_timeline (first_at, last_at, chunk_id, worker_id, later_keys, tenants, keys, job_types, delivered_at,
                                        answers, message_ids, delivery_attempts, effect_attempts, claim_ms, effect_created_at)
         VALUES ($1, $3, gen_random_uuid(), 'w-a', ARRAY['acme' || chr(31) || 'a', 'acme' || chr(31) || 'b'], ARRAY['acme'],
                 ARRAY['a', 'b', 'b'], ARRAY['pay'], ARRAY[$1, $2, $3]::timestamptz[], ARRAY['duplicate', 'key_reuse', 'key_reuse'],
                 ARRAY['m-a', 'm-b1', 'm-b2'], ARRAY[2, 1, 3], ARRAY[1], ARRAY[0.5]::real[], ARRAY[]::timestamptz[]),
                -- A chunk of first deliveries (later_keys NULL): never a refusal.
                ($1, $1, gen_random_uuid(), 'w-a', NULL, ARRAY['acme'], ARRAY['c'], ARRAY['pay'], ARRAY[$1]::timestamptz[],
                 ARRAY['claimed'], ARRAY['m-c'], ARRAY[1], ARRAY[1], ARRAY[0.5]::real[], ARRAY[]::timestamptz[])`,
        [at(0), at(1), at(2)],
      );
      const page1 = await listKeyReuseRefusals(acme, { limit: 1 }, db.pool);
      const page2 = await listKeyReuseRefusals(acme, { limit: 1, cursor: page1.nextCursor ?? "" }, db.pool);
      expect(page2.nextCursor).toBeNull();
      expect(
        [...page1.refusals, ...page2.refusals].map((r) => [r.key, r.messageId, r.deliveryAttempt, r.worker, r.deliveredAt]),
      ).toEqual([
        ["b", "m-b2", 3, "w-a", at(2).toISOString()],
        ["b", "m-b1", 1, "w-a", at(1).toISOString()],
      ]);
      expect((await countEffectStates(acme, {}, db.pool)).keyReuse).toBe(2);
      // The window is the delivery's: one that leaves the first refusal out counts and lists one.
      const from = at(2);
      expect((await countEffectStates(acme, { from }, db.pool)).keyReuse).toBe(1);
      expect((await listKeyReuseRefusals(acme, { from, limit: 5 }, db.pool)).refusals).toHaveLength(1);
    });

    const refusals: ListUnderTest = {
      async reset(d) {
        await d.pool.query("TRUNCATE delivery_timeline");
      },
      async insert(d, times) {
        const { rows } = await d.pool.query<{ id: string }>(
          `INSERT INTO delivery_timeline (first_at, last_at, chunk_id, worker_id, later_keys, tenants, keys, job_types, delivered_at,
                                          answers, message_ids, delivery_attempts, effect_attempts, claim_ms, effect_created_at)
           SELECT t, t, gen_random_uuid(), 'w', ARRAY[tenant || chr(31) || 'k-' || n], ARRAY[tenant], ARRAY['k-' || n], ARRAY['pay'],
                  ARRAY[t], ARRAY['key_reuse'], ARRAY['m-' || n], ARRAY[1], ARRAY[1], ARRAY[0.1]::real[], ARRAY[]::timestamptz[]
             FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n), unnest(ARRAY['acme', 'globex']) AS tenant
           RETURNING CASE WHEN tenants[1] = 'acme' THEN chunk_id::text || ':1' END AS id`,
          [times],
        );
        return rows.flatMap((r) => (r.id ? [r.id] : []));
      },
      async page(d, limit, cursor) {
        const list = await listKeyReuseRefusals(acme, { limit, cursor, now: NOW }, d.pool);
        return { ids: list.refusals.map((r) => r.id), nextCursor: list.nextCursor };
      },
      async declaredOrder(d) {
        const { rows } = await d.pool.query<{ rid: string }>(
          "SELECT chunk_id::text || ':1' AS rid FROM delivery_timeline WHERE tenants[1] = 'acme' ORDER BY first_at DESC, chunk_id::text DESC",
        );
        return rows.map((r) => r.rid);
      },
    };

    it("pages every refusal once, newest first, ties by chunk and place", async () => {
      await assertPagesExactlyOnce(db, refusals);
    });
  });
});
