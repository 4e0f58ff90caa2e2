import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as auditRoute from "../../app/api/v1/audit/route";
import * as bulkItemsRoute from "../../app/api/v1/bulk/[id]/items/route";
import * as bulkReleaseRoute from "../../app/api/v1/bulk/release/route";
import * as releaseRoute from "../../app/api/v1/effects/[key]/release/route";
import * as adviceApplyRoute from "../../app/api/v1/retention/advice/apply/route";
import * as advicePreviewRoute from "../../app/api/v1/retention/advice/preview/route";
import * as settingsRoute from "../../app/api/v1/retention/settings/route";
import { appendAudit } from "../../lib/auth/audit";
import { createToken } from "../../lib/auth/tokens";
import { effectsStore, type MysqlEffectsStore } from "../../lib/console/effects-store";
import { closeEffectsMysqlPools } from "../../lib/db/effects-pool";
import { getPrisma } from "../../lib/db/prisma";
import { SNAPSHOT_PAGE_MYSQL } from "../../lib/features/bulk-actions/bulk-kinds";
import { runBulkActions } from "../../lib/features/bulk-actions/bulk-runner";
import type { BulkActionResponse, BulkDryRunResponse, BulkItemsResponse } from "../../lib/features/bulk-actions/contract";
import { releaseOnMysql } from "../../lib/features/keys-and-effects/release-effect";
import { updateRetentionSettings } from "../../lib/features/retention-and-gaps/settings";
import { GAPS_SEED_EXPECTED, seedGapsMysql } from "../../lib/features/retention-and-gaps/testing/seed-gaps";
import { settleRelease } from "../../lib/idempotency/admin";
import type { EffectsDb } from "../../lib/idempotency/db";
import { createEngineDatabase, type EngineDatabase } from "../../lib/idempotency/test/engines";
import { testEffects } from "../../lib/idempotency/test/helpers";
import { waitFor } from "../../lib/queues/testing/wait";
import { createTestDatabase, type TestDatabase } from "../database";
import { findTestMariadb } from "../mariadb";

/**
 * The console's writes on a MySQL effects store (EFFECTS_DATABASE_URL on MariaDB) with its audit
 * log in PostgreSQL: a release, one or in bulk, and a retention settings change each audit
 * "requested" before MySQL is touched and their outcome after, under one request id — so the audit
 * never misses an action and never claims one that did not happen, even when MySQL fails mid-call.
 * Real MariaDB (skipped loudly outside CI when none answers; required under CI=true) and real PostgreSQL.
 */
const MARIADB = (await findTestMariadb()) !== null;
const CONSOLE = "http://console.test";

let pg: TestDatabase;
let my: EngineDatabase;
let store: MysqlEffectsStore;

beforeAll(async () => {
  if (!MARIADB) return;
  pg = await createTestDatabase();
  my = await createEngineDatabase("mariadb", { poolSize: 6 });
  process.env.DATABASE_URL = pg.url;
  process.env.EFFECTS_DATABASE_URL = my.url;
  process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
  process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
  store = effectsStore() as MysqlEffectsStore;
});
afterAll(async () => {
  if (!MARIADB) return;
  delete process.env.EFFECTS_DATABASE_URL;
  await closeEffectsMysqlPools();
  await getPrisma().$disconnect();
  await my.drop();
  await pg.drop();
});

const uniq = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

/** A claim of `tenant` in MariaDB: in progress, its lease ending `leaseSeconds` from now. */
async function stuck(tenant: string, key: string, leaseSeconds = -60, policy = "external") {
  await my.run(
    `INSERT INTO effects (tenant_id, \`key\`, job_type, status, policy, owner, attempt, lease_until, created_at, updated_at)
     VALUES (?, ?, 'capture', 'in_progress', ?, 'w1:dead', 1, UTC_TIMESTAMP(3) + INTERVAL ? SECOND, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`,
    [tenant, key, policy, leaseSeconds],
  );
}

async function effect(tenant: string, key: string) {
  const [row] = await my.effects(tenant, key);
  return row;
}

async function bearer(role: "viewer" | "operator" | "admin", tenantId: string | null) {
  const { secret } = await createToken({ name: `mw-${role}-${randomBytes(3).toString("hex")}`, tenantId, role });
  return { authorization: `Bearer ${secret}`, host: "console.test" };
}

type Route = { [method: string]: unknown };
async function send(route: Route, method: string, url: string, headers: Record<string, string>, body?: unknown, params = {}) {
  const handler = route[method] as (r: Request, c: { params: Promise<unknown> }) => Promise<Response>;
  const response = await handler(
    new Request(`${CONSOLE}${url}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { params: Promise.resolve(params) },
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> & { error?: { message: string } } };
}

const release = (key: string, headers: Record<string, string>, query = "") =>
  send(releaseRoute, "POST", `/api/v1/effects/${encodeURIComponent(key)}/release${query}`, headers, undefined, { key });

/** The audit rows of releases of `key`, oldest first. */
async function releaseAudit(key: string) {
  const { rows } = await pg.pool.query<{ result: string; tenant_id: string; detail: Record<string, unknown> }>(
    "SELECT result, tenant_id, detail FROM audit_log WHERE action = 'effect.release' AND target = $1 ORDER BY id",
    [key],
  );
  return rows;
}

/** Every "requested" row is followed by at most one outcome of its request, and every outcome names a request that was requested first. */
function outcomesByRequest(rows: { result: string; detail: Record<string, unknown> }[]): Map<string, string[]> {
  const byRequest = new Map<string, string[]>();
  for (const row of rows) {
    const request = String(row.detail.request);
    const seen = byRequest.get(request);
    if (row.result === "requested") {
      expect(seen, `request ${request} requested twice`).toBeUndefined();
      byRequest.set(request, []);
    } else {
      expect(seen, `outcome ${row.result} of request ${request} before its "requested" row`).toBeDefined();
      seen?.push(row.result);
    }
  }
  return byRequest;
}

/** The Audit log's rows of `key`'s releases (GET /api/v1/audit, as the Audit view reads them), oldest first. */
async function auditView(key: string) {
  const admin = await bearer("admin", null);
  const page = await send(auditRoute, "GET", `/api/v1/audit?action=effect.release&target=${encodeURIComponent(key)}`, admin);
  expect(page.status).toBe(200);
  return (page.body.entries as { result: string; outcome?: string }[])
    .reverse()
    .map((e) => ({ result: e.result, outcome: e.outcome }));
}

/** Holds `key`'s row lock on a connection of its own until `commit` (what a claim or another release holds while it decides). */
async function holdRow(tenant: string, key: string) {
  const holder = await my.begin();
  await (holder.tx as unknown as mysql.Connection).query("SELECT 1 FROM effects WHERE tenant_id = ? AND `key` = ? FOR UPDATE", [
    tenant,
    key,
  ]);
  return holder;
}

/** Ends a holder's transaction (if still open) and returns its connection: never a pooled connection inside a transaction. */
async function letGo(holder: Awaited<ReturnType<typeof holdRow>>) {
  await holder.rollback().catch(() => {});
  holder.release();
}

/** Waits until `n` sessions wait on a row lock. */
async function lockWaits(n: number) {
  while ((await my.lockWaits()) < n) await sleep(10);
}

describe.skipIf(!MARIADB)("the console's writes on a MySQL effects store", () => {
  it("a release through the API releases on MariaDB and is audited as requested, then ok, under one request id; a refusal likewise", async () => {
    const tenant = uniq("t");
    const key = uniq("capture:order");
    await stuck(tenant, key);
    const operator = await bearer("operator", tenant);
    const first = await release(key, operator);
    expect(first.status).toBe(200);
    expect(first.body.message).toMatch(/attempt 1's claim is marked failed/);
    expect(await effect(tenant, key)).toMatchObject({ status: "failed", attempt: 1, lease_until: null });
    expect((await effect(tenant, key))?.error).toMatch(/^released by /);
    const live = uniq("capture:live");
    await stuck(tenant, live, 3600);
    const refused = await release(live, operator);
    expect(refused.status).toBe(409);
    expect(refused.body.error?.message).toMatch(/alive/);
    expect((await effect(tenant, live))?.status).toBe("in_progress");

    for (const [k, outcome] of [
      [key, "ok"],
      [live, "lease_alive"],
    ] as const) {
      const rows = await releaseAudit(k);
      expect(rows.map((r) => r.result)).toEqual(["requested", outcome]);
      expect(rows[0]?.detail.request).toBe(rows[1]?.detail.request);
      expect(rows.every((r) => r.tenant_id === tenant && r.detail.store === "mysql")).toBe(true);
    }
    expect((await releaseAudit(key))[1]?.detail.attempt).toBe(1);
    expect(await auditView(key)).toEqual([
      { result: "requested", outcome: "ok" },
      { result: "ok", outcome: undefined },
    ]);
  });

  it("two releases of one key at once, on separate connections: one release, and each audited truthfully", async () => {
    const tenant = uniq("t");
    const key = uniq("capture:twice");
    await stuck(tenant, key);
    const operator = await bearer("operator", tenant);
    // Both wait on the row's lock, so both have decided nothing when it frees.
    const holder = await holdRow(tenant, key);
    let answers: { status: number }[];
    try {
      const both = Promise.all([release(key, operator), release(key, operator)]);
      await lockWaits(2);
      await holder.commit();
      answers = await both;
    } finally {
      await letGo(holder);
    }
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(await effect(tenant, key)).toMatchObject({ status: "failed", attempt: 1 });
    const rows = await releaseAudit(key);
    const outcomes = outcomesByRequest(rows);
    expect(outcomes.size).toBe(2);
    expect([...outcomes.values()].map((o) => o.join()).sort()).toEqual(["not_in_progress", "ok"]);
  });

  it("negative control: a naive release (read the status, then update) run twice at once reports two releases", async () => {
    const tenant = uniq("t");
    const key = uniq("capture:naive");
    await stuck(tenant, key);
    const naive = async () => {
      const [row] = await my.rows<{ status: string }>("SELECT status FROM effects WHERE tenant_id = ? AND `key` = ?", [
        tenant,
        key,
      ]);
      if (row?.status !== "in_progress") return "not_in_progress";
      await my.run("UPDATE effects SET status = 'failed', lease_until = NULL WHERE tenant_id = ? AND `key` = ?", [tenant, key]);
      return "ok";
    };
    const holder = await holdRow(tenant, key);
    let results: string[];
    try {
      // Both read before either writes (the plain read does not wait on the row's lock), as two console requests can.
      const both = Promise.all([naive(), naive()]);
      const updating = async () =>
        Number(
          (
            await my.rows<{ n: number }>(
              "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND INFO LIKE 'UPDATE effects%'",
              [my.schema],
            )
          )[0]?.n,
        );
      while ((await updating()) < 2) await sleep(10);
      await holder.commit();
      results = await both;
    } finally {
      await letGo(holder);
    }
    // What the real release's test above refuses: two "ok" audit rows for one release.
    expect(results).toEqual(["ok", "ok"]);
  });

  it("a release racing a worker's takeover: exactly one owner of the next attempt, and the audit says what happened to it", async () => {
    const tenant = uniq("t");
    const operator = await bearer("operator", tenant);
    const results: string[] = [];
    for (let round = 0; round < 4; round++) {
      const key = uniq("capture:race");
      await stuck(tenant, key);
      const effects = testEffects(my, { wait: "0s" });
      const holder = await holdRow(tenant, key);
      let claim: Awaited<ReturnType<typeof effects.claim>>;
      let answer: { status: number };
      try {
        const racing = Promise.all([effects.claim({ tenant, key, jobType: "capture" }), release(key, operator)]);
        await lockWaits(2);
        await holder.commit();
        [claim, answer] = await racing;
      } finally {
        await letGo(holder);
      }
      // Whichever went first, the worker owns attempt 2: a release before it made it a retry, a
      // release after it found the new lease alive.
      expect(claim.kind).toBe("owned");
      expect(await effect(tenant, key)).toMatchObject({ status: "in_progress", attempt: 2 });
      const rows = await releaseAudit(key);
      expect(rows.map((r) => r.result)).toEqual(["requested", answer.status === 200 ? "ok" : "lease_alive"]);
      if (answer.status === 200) expect(rows[1]?.detail.attempt).toBe(1);
      results.push(rows[1]?.result as string);
      if (claim.kind === "owned") await claim.claim.complete("done");
      await effects.close();
    }
    expect(results.every((r) => r === "ok" || r === "lease_alive")).toBe(true);
  });

  it("MySQL failing mid-release leaves the audit saying outcome unknown, never released; the library settles it later", async () => {
    const tenant = uniq("t");
    const key = uniq("capture:outage");
    await stuck(tenant, key);
    const operator = await bearer("operator", tenant);
    const holder = await holdRow(tenant, key);
    let answer: Awaited<ReturnType<typeof release>>;
    try {
      const releasing = release(key, operator);
      // The console's connection, cut from the server's side in the middle of the release's CALL.
      // (PROCESSLIST shows the statement the procedure is at: its locking read of the effect, where
      // the holder keeps it. lockWaits would count its INSERT of the request's row just before.)
      let call: { id: number } | undefined;
      for (let polls = 0; polls < 1000 && !call; polls++) {
        [call] = await my.rows<{ id: number }>(
          `SELECT ID AS id FROM information_schema.PROCESSLIST
            WHERE DB = ? AND ID <> CONNECTION_ID() AND COMMAND IN ('Query', 'Execute') AND INFO LIKE '%FOR UPDATE%'`,
          [my.schema],
        );
        if (!call) await sleep(10);
      }
      expect(call).toBeDefined();
      await my.run(`KILL CONNECTION ${Number(call?.id)}`);
      answer = await releasing;
      await holder.rollback();
    } finally {
      await letGo(holder);
    }
    expect(answer.status).toBe(503);
    expect(answer.body.error?.message).toMatch(/unknown/);
    const rows = await releaseAudit(key);
    expect(rows.map((r) => r.result)).toEqual(["requested", "unknown"]);
    expect(rows.some((r) => r.result === "ok")).toBe(false);
    expect(await auditView(key)).toEqual([
      { result: "requested", outcome: "unknown" },
      { result: "unknown", outcome: undefined },
    ]);
    expect((await effect(tenant, key))?.status).toBe("in_progress");
    // What the operator does next: settle the request (it never ran, and now never will), then release again.
    const request = String(rows[0]?.detail.request);
    expect(
      await settleRelease(store.pool as unknown as EffectsDb, {
        requestId: request,
        tenant,
        key,
        settledBy: "ops",
        schema: store.database,
      }),
    ).toEqual({ outcome: "fenced", attempt: null });
    expect((await release(key, operator)).status).toBe(200);
  });

  it("a console dying between the release and its outcome row: the Audit view says outcome unknown, and settleRelease learns it was released", async () => {
    const tenant = uniq("t");
    const key = uniq("capture:dies");
    await stuck(tenant, key);
    const prisma = getPrisma();
    let appends = 0;
    // The audit log takes the "requested" row, then the process is gone before the outcome's.
    const dying = {
      auditLog: {
        create: (args: Parameters<typeof prisma.auditLog.create>[0]) => {
          appends++;
          if (appends > 1) throw new Error("the console process died");
          return prisma.auditLog.create(args);
        },
      },
    } as unknown as Pick<typeof prisma, "auditLog">;
    const tokenId = (await createToken({ name: uniq("dies"), tenantId: tenant, role: "operator" })).token.id;
    await expect(
      releaseOnMysql(
        store,
        { principal: { tokenId, actor: "ops", tenantId: tenant, role: "operator" }, tenant, key, ip: null },
        dying,
      ),
    ).rejects.toThrow(/died/);
    expect((await effect(tenant, key))?.status).toBe("failed");
    const rows = await releaseAudit(key);
    expect(rows.map((r) => r.result)).toEqual(["requested"]);
    expect(await auditView(key)).toEqual([{ result: "requested", outcome: "unknown" }]);
    expect(
      await settleRelease(store.pool as unknown as EffectsDb, {
        requestId: String(rows[0]?.detail.request),
        tenant,
        key,
        settledBy: "ops",
        schema: store.database,
      }),
    ).toEqual({ outcome: "released", attempt: 1 });
  });

  it("a tenant cannot release another tenant's key: 404 as for a missing one, and the key is untouched", async () => {
    const owner = uniq("t");
    const other = uniq("t");
    const key = uniq("capture:theirs");
    await stuck(owner, key);
    const intruder = await bearer("operator", other);
    expect((await release(key, intruder)).status).toBe(404);
    expect((await release(key, intruder, `?tenant=${owner}`)).status).toBe(404);
    expect((await effect(owner, key))?.status).toBe("in_progress");
    const rows = await releaseAudit(key);
    expect(rows.every((r) => r.tenant_id === other)).toBe(true);
    expect(rows.filter((r) => r.result !== "requested").map((r) => r.result)).toEqual(["not_found", "not_found"]);
  });

  it("a bulk release on MariaDB: its items page without repeat or skip, each key released once, a resumed item repeats harmlessly", async () => {
    const tenant = uniq("t");
    // More than a snapshot page, with leases tied in threes (and the page's end inside a tie: 537 =
    // one lone newest, then threes), so the keyset must break ties by key.
    const n = SNAPSHOT_PAGE_MYSQL + 37;
    await my.run(
      `INSERT INTO effects (tenant_id, \`key\`, job_type, status, policy, owner, attempt, lease_until, created_at, updated_at)
       SELECT ?, CONCAT('stuck:ord-', seq), 'capture', 'in_progress', 'external', 'w:dead', 1,
              UTC_TIMESTAMP(3) - INTERVAL 1 HOUR - INTERVAL (seq DIV 3) SECOND, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)
         FROM seq_1_to_${n}`,
      [tenant],
    );
    // Decoys the filter skips: a live lease, an at-most-once step, another key shape.
    await stuck(tenant, "stuck:ord-live", 3600);
    await stuck(tenant, "stuck:ord-amo", -60, "at_most_once");
    await stuck(tenant, "other:1");
    const operator = await bearer("operator", tenant);
    const dry = await send(bulkReleaseRoute, "POST", "/api/v1/bulk/release", operator, { q: "ORD", dryRun: true });
    expect(dry.status).toBe(200);
    expect((dry.body as unknown as BulkDryRunResponse).count).toBe(n);
    const started = await send(bulkReleaseRoute, "POST", "/api/v1/bulk/release", operator, { q: "ORD" });
    expect(started.status).toBe(202);
    const action = (started.body as unknown as BulkActionResponse).action;
    expect(action.total).toBe(n);

    // The first item's release landed on MySQL before a crash kept its outcome from PostgreSQL.
    const [first] = (
      await pg.pool.query<{ key: string }>("SELECT key FROM bulk_action_items WHERE action_id = $1 AND seq = 1", [action.id])
    ).rows;
    await releaseOnMysql(store, {
      principal: { tokenId: null as unknown as string, actor: "crashed-runner", tenantId: tenant, role: "operator" },
      tenant,
      key: first?.key as string,
      ip: null,
      requestId: `bulk:${action.id}:1`,
      detail: { bulkAction: action.id },
    });

    await runBulkActions({ owner: "test-runner" });
    const { rows: state } = await pg.pool.query("SELECT state, processed, applied FROM bulk_actions WHERE id = $1", [action.id]);
    expect(state[0]).toMatchObject({ state: "done", processed: n, applied: n });

    // Its items, a page at a time: seq 1..n once each, every stuck key once.
    const seen: number[] = [];
    const keys = new Set<string>();
    let cursor: string | null = null;
    do {
      const page = await send(
        bulkItemsRoute,
        "GET",
        `/api/v1/bulk/${action.id}/items?limit=97${cursor ? `&cursor=${cursor}` : ""}`,
        operator,
        undefined,
        { id: action.id },
      );
      expect(page.status).toBe(200);
      const body = page.body as unknown as BulkItemsResponse;
      for (const item of body.items) {
        seen.push(item.seq);
        keys.add(item.key);
        expect(item.status).toBe("applied");
      }
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(keys.size).toBe(n);
    expect([...keys].every((k) => /^stuck:ord-\d+$/.test(k))).toBe(true);

    const [counts] = await my.rows<{ failed: number; attempts: number }>(
      "SELECT SUM(status = 'failed') AS failed, MAX(attempt) AS attempts FROM effects WHERE tenant_id = ? AND `key` LIKE 'stuck:ord-%' AND `key` NOT IN ('stuck:ord-live', 'stuck:ord-amo')",
      [tenant],
    );
    expect(Number(counts?.failed)).toBe(n);
    expect(Number(counts?.attempts)).toBe(1);
    expect((await effect(tenant, "stuck:ord-live"))?.status).toBe("in_progress");
    expect((await effect(tenant, "stuck:ord-amo"))?.status).toBe("in_progress");
    expect((await effect(tenant, "other:1"))?.status).toBe("in_progress");

    // Every key: one "ok" outcome per request; the resumed first item answered the recorded outcome.
    const { rows: audit } = await pg.pool.query<{ target: string; result: string; detail: Record<string, unknown> }>(
      "SELECT target, result, detail FROM audit_log WHERE action = 'effect.release' AND detail->>'bulkAction' = $1 ORDER BY id",
      [action.id],
    );
    const oks = audit.filter((r) => r.result === "ok");
    expect(new Set(oks.map((r) => r.target)).size).toBe(n);
    expect(oks.filter((r) => r.target === first?.key).map((r) => r.detail.repeated ?? false)).toEqual([false, true]);
    expect(audit.filter((r) => r.result !== "ok" && r.result !== "requested")).toEqual([]);
  });

  it("a retention settings change persists on MariaDB and is audited requested, then ok; a stale one changes nothing and says so", async () => {
    const admin = await bearer("admin", null);
    const changed = await send(settingsRoute, "PUT", "/api/v1/retention/settings", admin, {
      retentionDays: 9,
      maxRetryWindowDays: 2,
      premakeCount: 5,
    });
    expect(changed.status).toBe(200);
    expect(changed.body.settings).toMatchObject({ retentionDays: 9, maxRetryWindowDays: 2, premakeCount: 5 });
    const [row] = await my.rows(
      "SELECT retention_days, max_retry_window_days, premake_count, updated_by FROM retention_settings",
    );
    expect(row).toMatchObject({ retention_days: 9, max_retry_window_days: 2, premake_count: 5 });
    expect(row?.updated_by).toMatch(/^mw-admin-/);

    // A change confirmed against values that no longer hold (what the advice's Apply sends): refused under the row's lock.
    await expect(
      updateRetentionSettings(
        { retentionDays: 12, expect: { retentionDays: 7, maxRetryWindowDays: 3 } },
        { actor: "ops", audit: (tx, entry) => appendAudit(tx, { principal: null, tenantId: null, ...entry }), store },
      ),
    ).rejects.toMatchObject({ code: "RETENTION_STALE" });
    const [kept] = await my.rows("SELECT retention_days FROM retention_settings");
    expect(kept).toMatchObject({ retention_days: 9 });

    const { rows } = await pg.pool.query<{ result: string; detail: Record<string, unknown> }>(
      "SELECT result, detail FROM audit_log WHERE action = 'retention.settings' ORDER BY id",
    );
    expect(rows.map((r) => r.result)).toEqual(["requested", "ok", "requested", "stale"]);
    expect(rows[0]?.detail.request).toBe(rows[1]?.detail.request);
    expect(rows[2]?.detail.request).toBe(rows[3]?.detail.request);
    expect(rows[0]?.detail.after).toMatchObject({ retentionDays: 9, maxRetryWindowDays: 2, premakeCount: 5 });
  });

  it("MySQL failing mid-way through a settings change: audited as unknown, never ok, and the settings are as they were", async () => {
    const admin = await bearer("admin", null);
    const [before] = await my.rows<{ retention_days: number }>("SELECT retention_days FROM retention_settings WHERE id = 1");
    expect(before).toBeDefined();
    const holder = await my.begin();
    let answer: Awaited<ReturnType<typeof send>>;
    try {
      await (holder.tx as unknown as mysql.Connection).query("SELECT 1 FROM retention_settings WHERE id = 1 FOR UPDATE");
      const changing = send(settingsRoute, "PUT", "/api/v1/retention/settings", admin, { retentionDays: 30 });
      // Waits for the settings change's own locking read: lockWaits() counts any session of the
      // database in an INSERT or a FOR UPDATE, so it can be met before this one waits (a CI run
      // once found no writer right after it).
      const writer = await waitFor(
        "the settings change's locking read",
        async () =>
          (
            await my.rows<{ id: number }>(
              `SELECT ID AS id FROM information_schema.PROCESSLIST
                WHERE DB = ? AND ID <> CONNECTION_ID() AND COMMAND IN ('Query', 'Execute') AND INFO LIKE '%retention_settings%FOR UPDATE%'`,
              [my.schema],
            )
          )[0],
        10_000,
      );
      expect(writer).toBeDefined();
      await my.run(`KILL CONNECTION ${Number(writer?.id)}`);
      answer = await changing;
    } finally {
      await letGo(holder);
    }
    expect(answer.status).toBe(503);
    expect(answer.body.error?.message).toMatch(/unknown/);
    const [after] = await my.rows<{ retention_days: number }>("SELECT retention_days FROM retention_settings WHERE id = 1");
    expect(after?.retention_days).toBe(before?.retention_days);
    const { rows } = await pg.pool.query<{ result: string; detail: Record<string, unknown> }>(
      "SELECT result, detail FROM audit_log WHERE action = 'retention.settings' ORDER BY id DESC LIMIT 2",
    );
    expect(rows.map((r) => r.result).reverse()).toEqual(["requested", "unknown"]);
    expect(rows[0]?.detail.request).toBe(rows[1]?.detail.request);
  });
  it("the retention advice's preview plans MariaDB's partitions as they would be (rolled back); its Apply is a settings change audited requested, then ok, and a second confirm is stale", async () => {
    // Last in the file: it replaces the timeline's partitions and seeds the advisor's gaps.
    const DAY = 86_400_000;
    const today = Math.floor(Date.now() / DAY) * DAY;
    const at = (offset: number) => new Date(today + offset * DAY).toISOString().slice(0, 19).replace("T", " ");
    const name = (offset: number) => `p${at(offset).slice(0, 10).replaceAll("-", "")}`;
    const days = [-10, -9, -1, 0, 1, 2, 3];
    await my.run("ALTER TABLE delivery_timeline REMOVE PARTITIONING");
    await my.run(
      `ALTER TABLE delivery_timeline PARTITION BY RANGE COLUMNS (delivered_at) (PARTITION p_start VALUES LESS THAN ('2000-01-01 00:00:00'), ${days
        .map((d) => `PARTITION ${name(d)} VALUES LESS THAN ('${at(d + 1)}')`)
        .join(", ")})`,
    );
    await seedGapsMysql((sql, values) => store.pool.query(sql, values));
    const days23 = GAPS_SEED_EXPECTED.recommendedDays;

    const preview = await send(advicePreviewRoute, "GET", "/api/v1/retention/advice/preview", await bearer("viewer", null));
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body.change, JSON.stringify(preview.body.advice)).toEqual({
      before: { retentionDays: 7, maxRetryWindowDays: 3 },
      after: { retentionDays: days23, maxRetryWindowDays: 3 },
    });
    expect(preview.body.plan).toMatchObject({ keepSeconds: days23 * 86_400 });
    // Today the ten- and nine-day-old partitions expire; with the advice they are kept.
    expect(
      (preview.body.partitionChanges as { name: string; now: string; after: string }[]).map((p) => [p.name, p.now, p.after]),
    ).toEqual([
      [name(-10), "drop", "keep"],
      [name(-9), "drop", "keep"],
    ]);
    const [untouched] = await my.rows("SELECT retention_days, max_retry_window_days FROM retention_settings WHERE id = 1");
    expect(untouched).toMatchObject({ retention_days: 7, max_retry_window_days: 3 });

    const admin = await bearer("admin", null);
    const confirm = { retentionDays: days23, expect: { retentionDays: 7, maxRetryWindowDays: 3 } };
    const applied = await send(adviceApplyRoute, "POST", "/api/v1/retention/advice/apply", admin, confirm);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body.settings).toMatchObject({ retentionDays: days23 });
    const [row] = await my.rows("SELECT retention_days FROM retention_settings WHERE id = 1");
    expect(row).toMatchObject({ retention_days: days23 });
    const again = await send(adviceApplyRoute, "POST", "/api/v1/retention/advice/apply", admin, confirm);
    expect(again.status).toBe(409);
    expect((again.body.error as { code?: string } | undefined)?.code).toBe("RETENTION_STALE");

    const { rows } = await pg.pool.query<{ result: string; detail: Record<string, unknown> }>(
      "SELECT result, detail FROM audit_log WHERE action = 'retention.advice.apply' ORDER BY id",
    );
    expect(rows.map((r) => r.result)).toEqual(["requested", "ok", "requested", "stale"]);
    expect(rows[1]?.detail.request).toBe(rows[0]?.detail.request);
    expect(rows[3]?.detail.request).toBe(rows[2]?.detail.request);
    expect(rows[0]?.detail).toMatchObject({
      before: { retentionDays: 7 },
      after: { retentionDays: days23 },
      advice: { recommendedSeconds: days23 * 86_400 },
    });
  });
});
