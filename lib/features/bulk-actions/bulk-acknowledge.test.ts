import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as cancelRoute from "../../../app/api/v1/bulk/[id]/cancel/route";
import * as bulkRoute from "../../../app/api/v1/bulk/[id]/route";
import * as acknowledgeRoute from "../../../app/api/v1/bulk/acknowledge-findings/route";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { createToken } from "../../auth/tokens";
import { getPrisma } from "../../db/prisma";
import { runBulkActions, runOneBulkAction } from "./bulk-runner";
import type { BulkAcknowledgeDryRunResponse, BulkActionResponse } from "./contract";
import { killRunnerMidway } from "./testing/kill-runner-midway";

/**
 * Bulk acknowledge of reconciliation findings through the API and the shared runner, on a real
 * PostgreSQL: the dry run counts and samples what is then acknowledged (open findings of the
 * filter only), each finding and the action are audited, a platform action spans every tenant (and
 * no tenant token sees it), the cap refuses more, cancel stops it, a runner SIGKILLed mid-way is
 * resumed with each finding acknowledged exactly once, and a viewer and a read-only console are refused.
 */
const CONSOLE = "http://console.test";
const URL_PATH = "/api/v1/bulk/acknowledge-findings";
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  process.env.DATABASE_URL = db.url;
  process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
  process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
});
afterAll(async () => {
  await getPrisma().$disconnect();
  await db.drop();
});

let tenant: string;
let provider: string;
beforeEach(async () => {
  tenant = `t${randomBytes(3).toString("hex")}`;
  // A provider of this test alone: a platform filter on it sees no other test's findings.
  provider = `p${randomBytes(3).toString("hex")}`;
  // One database for the file: an earlier test's unfinished action must not be the one a runner picks.
  await db.pool.query("UPDATE bulk_actions SET state = 'cancelled' WHERE state IN ('queued', 'running')");
});

/** `n` findings of `kind` for `forTenant` (null: a provider object naming no tenant), in `state`, last seen 1…n minutes ago. */
async function seedFindings(n: number, kind = "drift", forTenant: string | null = tenant, state = "open") {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, job_type, effect_key, detail, state, first_seen_at, last_seen_at)
     SELECT $1 || ':' || $2 || ':' || coalesce($3, '-') || ':' || $5 || ':' || g, $1, $2, $3, 'capture-payment',
            'charge:' || coalesce($3, 'none') || '-' || g, 'planted ' || $2 || ' ' || g, $5,
            now() - make_interval(mins => g), now() - make_interval(mins => g)
       FROM generate_series(1, $4::int) g
     RETURNING id::text`,
    [provider, kind, forTenant, n, state],
  );
  return rows.map((r) => r.id);
}

async function bearer(role: "viewer" | "operator" | "admin" = "operator", tenantId: string | null = tenant) {
  const { secret } = await createToken({ name: `bulk-ack-${role}-${randomBytes(3).toString("hex")}`, tenantId, role });
  return { authorization: `Bearer ${secret}`, host: "console.test" };
}

function post(
  route: { POST: (r: Request, c: { params: Promise<{ id: string }> }) => Promise<Response> },
  url: string,
  headers: Record<string, string>,
  body?: unknown,
  params: { id: string } = { id: "" },
) {
  return route.POST(
    new Request(`${CONSOLE}${url}`, {
      method: "POST",
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { params: Promise.resolve(params) },
  );
}

async function start(body: Record<string, unknown>, headers?: Record<string, string>): Promise<BulkActionResponse["action"]> {
  const response = await post(acknowledgeRoute, URL_PATH, headers ?? (await bearer()), { note: "bulk checked", ...body });
  expect(response.status, await response.clone().text()).toBe(202);
  return ((await response.json()) as BulkActionResponse).action;
}

/** The acknowledge audit rows the action wrote, per finding: how many and their results. */
async function acknowledgementsOf(actionId: string) {
  return (
    await db.pool.query<{ target: string; n: string; results: string; tenant_id: string | null }>(
      `SELECT target, count(*) AS n, string_agg(result, ',') AS results, max(tenant_id) AS tenant_id FROM audit_log
        WHERE action = 'reconciliation.finding.acknowledge' AND detail->>'bulkAction' = $1 GROUP BY target`,
      [actionId],
    )
  ).rows;
}

async function stateOf(id: string) {
  return (await db.pool.query("SELECT state, processed, applied, total, tenant_id, note FROM bulk_actions WHERE id = $1", [id]))
    .rows[0];
}

async function findingStates(ids: string[]) {
  const { rows } = await db.pool.query<{ id: string; state: string; state_note: string | null; state_changed_by: string | null }>(
    "SELECT id::text, state, state_note, state_changed_by FROM reconciliation_findings WHERE id = ANY($1::bigint[]) ORDER BY id",
    [ids],
  );
  return rows;
}

describe("bulk acknowledge of reconciliation findings", () => {
  it("the dry run counts and samples exactly what the action acknowledges: open findings of the filter, each audited", async () => {
    const drift = await seedFindings(6, "drift");
    const missing = await seedFindings(2, "missing_at_provider");
    const resolved = await seedFindings(2, "drift", tenant, "resolved");
    const elsewhere = await seedFindings(2, "drift", "elsewhere");
    const operator = await bearer();

    const dry = await post(acknowledgeRoute, URL_PATH, operator, { kind: "drift", provider, dryRun: true });
    expect(dry.status).toBe(200);
    const counted = (await dry.json()) as BulkAcknowledgeDryRunResponse;
    expect(counted).toMatchObject({ dryRun: true, tenant, count: 6, overCap: false });
    expect(counted.sample.map((f) => f.id).sort()).toEqual([...drift].sort());
    // Newest last seen first, as the Reconciliation page lists them.
    expect(counted.sample.map((f) => f.detail)[0]).toBe("planted drift 1");
    expect(
      (await db.pool.query("SELECT count(*)::int AS n FROM bulk_actions WHERE kind = 'acknowledge_findings'")).rows[0].n,
    ).toBe(0);

    const action = await start({ kind: "drift", provider, note: "amounts checked with finance" }, operator);
    expect(action).toMatchObject({
      kind: "acknowledge_findings",
      state: "queued",
      total: 6,
      tenant,
      note: "amounts checked with finance",
      filter: { kind: "drift", provider, jobType: null, from: null, to: null },
    });
    await runBulkActions({ owner: "test-runner" });
    expect(await stateOf(action.id)).toMatchObject({ state: "done", processed: 6, applied: 6 });

    const acknowledged = await acknowledgementsOf(action.id);
    expect(acknowledged.map((r) => r.target).sort()).toEqual(counted.sample.map((f) => f.id).sort());
    expect(acknowledged.every((r) => r.results === "ok" && r.tenant_id === tenant)).toBe(true);
    for (const f of await findingStates(drift)) {
      expect(f).toMatchObject({ state: "acknowledged", state_note: "amounts checked with finance" });
      expect(f.state_changed_by).toMatch(/^bulk-ack-operator-/);
    }
    expect((await findingStates(missing)).map((f) => f.state)).toEqual(["open", "open"]);
    expect((await findingStates(resolved)).map((f) => f.state)).toEqual(["resolved", "resolved"]);
    expect((await findingStates(elsewhere)).map((f) => f.state)).toEqual(["open", "open"]);
    const own = await db.pool.query("SELECT action, detail FROM audit_log WHERE target = $1 ORDER BY id", [action.id]);
    expect(own.rows.map((r) => r.action)).toEqual(["bulk.start", "bulk.finish"]);
    expect(own.rows[0].detail).toMatchObject({
      kind: "acknowledge_findings",
      total: 6,
      note: "amounts checked with finance",
      filter: { kind: "drift", provider },
    });

    const progress = await bulkRoute.GET(
      new Request(`${CONSOLE}/api/v1/bulk/${action.id}`, { headers: await bearer("viewer") }),
      {
        params: Promise.resolve({ id: action.id }),
      },
    );
    expect(((await progress.json()) as BulkActionResponse).action).toMatchObject({ state: "done", processed: 6, applied: 6 });
  });

  it("a finding resolved after the action was created is left as it is, its refusal audited", async () => {
    const ids = await seedFindings(3);
    const action = await start({ provider });
    await db.pool.query("UPDATE reconciliation_findings SET state = 'resolved' WHERE id = $1::bigint", [ids[1]]);
    await runBulkActions({ owner: "test-runner" });
    expect(await stateOf(action.id)).toMatchObject({ state: "done", processed: 3, applied: 2 });
    expect((await findingStates(ids)).map((f) => f.state)).toEqual(["acknowledged", "resolved", "acknowledged"]);
    const results = Object.fromEntries((await acknowledgementsOf(action.id)).map((r) => [r.target, r.results]));
    expect(results).toEqual({ [ids[0] as string]: "ok", [ids[1] as string]: "conflict", [ids[2] as string]: "ok" });
    const outcomes = await db.pool.query("SELECT outcome FROM bulk_action_items WHERE action_id = $1 ORDER BY key", [action.id]);
    expect(outcomes.rows.map((r) => r.outcome).sort()).toEqual(["not_open", "ok", "ok"]);
  });

  it("a platform admin naming no tenant acknowledges every tenant's and the tenantless findings; no tenant token sees that action", async () => {
    const mine = await seedFindings(2);
    const other = await seedFindings(2, "drift", "elsewhere");
    const none = await seedFindings(1, "unknown_to_onceboard", null);
    const platform = await bearer("admin", null);
    const dry = (await (
      await post(acknowledgeRoute, URL_PATH, platform, { provider, dryRun: true })
    ).json()) as BulkAcknowledgeDryRunResponse;
    expect(dry).toMatchObject({ tenant: null, count: 5 });
    // A tenant operator's dry run of the same filter counts its own tenant's only.
    const own = (await (
      await post(acknowledgeRoute, URL_PATH, await bearer(), { provider, tenant: "elsewhere", dryRun: true })
    ).json()) as BulkAcknowledgeDryRunResponse;
    expect(own).toMatchObject({ tenant, count: 2 });

    const action = await start({ provider }, platform);
    expect(action.tenant).toBeNull();
    const foreign = await bulkRoute.GET(new Request(`${CONSOLE}/api/v1/bulk/${action.id}`, { headers: await bearer("admin") }), {
      params: Promise.resolve({ id: action.id }),
    });
    expect(foreign.status).toBe(404);
    const foreignCancel = await post(cancelRoute, `/api/v1/bulk/${action.id}/cancel`, await bearer("admin"), undefined, {
      id: action.id,
    });
    expect(foreignCancel.status).toBe(404);
    await runBulkActions({ owner: "test-runner" });
    expect(await stateOf(action.id)).toMatchObject({ state: "done", processed: 5, applied: 5, tenant_id: null });
    expect((await findingStates([...mine, ...other, ...none])).every((f) => f.state === "acknowledged")).toBe(true);
    const audited = Object.fromEntries((await acknowledgementsOf(action.id)).map((r) => [r.target, r.tenant_id]));
    expect(audited[none[0] as string]).toBeNull();
    expect(audited[other[0] as string]).toBe("elsewhere");
  });

  it("refuses a filter matching more than the cap (BULK_ACTION_MAX_ITEMS): the dry run says so, the action is never created", async () => {
    await seedFindings(6);
    process.env.BULK_ACTION_MAX_ITEMS = "5";
    try {
      const operator = await bearer();
      const dry = (await (
        await post(acknowledgeRoute, URL_PATH, operator, { provider, dryRun: true })
      ).json()) as BulkAcknowledgeDryRunResponse;
      expect(dry).toMatchObject({ count: 6, cap: 5, overCap: true });
      const refused = await post(acknowledgeRoute, URL_PATH, operator, { provider, note: "too many" });
      expect(refused.status).toBe(409);
      expect(await refused.text()).toContain("BULK_ACTION_MAX_ITEMS");
      const rows = await db.pool.query("SELECT count(*)::int AS n FROM bulk_actions WHERE tenant_id = $1", [tenant]);
      expect(rows.rows[0].n).toBe(0);
      const none = await post(acknowledgeRoute, URL_PATH, operator, { provider, kind: "pending", note: "nothing" });
      expect(none.status).toBe(409);
      expect(await none.text()).toContain("no open finding matches");
    } finally {
      delete process.env.BULK_ACTION_MAX_ITEMS;
    }
  });

  it("cancel stops the action: no finding is acknowledged after it commits, and it is audited", async () => {
    const ids = await seedFindings(20);
    const operator = await bearer();
    const action = await start({ provider }, operator);
    let cancelled = false;
    await runOneBulkAction({
      owner: "test-runner",
      afterItem: async ({ seq }) => {
        if (seq === 5 && !cancelled) {
          cancelled = true;
          const response = await post(cancelRoute, `/api/v1/bulk/${action.id}/cancel`, operator, undefined, { id: action.id });
          expect(response.status).toBe(200);
        }
      },
    });
    expect(await stateOf(action.id)).toMatchObject({ state: "cancelled", processed: 5 });
    expect(await acknowledgementsOf(action.id)).toHaveLength(5);
    expect((await findingStates(ids)).filter((f) => f.state === "open")).toHaveLength(15);
    expect(await runOneBulkAction({ owner: "another" })).toBe(-1);
    const audited = await db.pool.query("SELECT 1 FROM audit_log WHERE action = 'bulk.cancel' AND target = $1", [action.id]);
    expect(audited.rows).toHaveLength(1);
  });

  it("a runner process SIGKILLed mid-way is resumed from its checkpoint: each finding acknowledged exactly once", async () => {
    const ids = await seedFindings(60);
    const action = await start({ provider });
    await killRunnerMidway(db.url);
    const midway = await stateOf(action.id);
    expect(midway.state).toBe("running");
    expect(midway.processed).toBeGreaterThanOrEqual(15);
    expect(midway.processed).toBeLessThan(60);

    for (let tries = 0; tries < 100 && (await stateOf(action.id)).state !== "done"; tries++) {
      if ((await runOneBulkAction({ owner: "restarted-console" })) === -1) await sleep(200);
    }
    expect(await stateOf(action.id)).toMatchObject({ state: "done", processed: 60, applied: 60 });
    const acknowledged = await acknowledgementsOf(action.id);
    expect(acknowledged).toHaveLength(60);
    expect(acknowledged.filter((r) => Number(r.n) !== 1 || r.results !== "ok")).toEqual([]);
    expect((await findingStates(ids)).every((f) => f.state === "acknowledged")).toBe(true);
  }, 60_000);

  it("refuses a viewer (403), a read-only console (403) and a start without a note (400), writing nothing", async () => {
    const ids = await seedFindings(2);
    const viewer = await post(acknowledgeRoute, URL_PATH, await bearer("viewer"), { provider, note: "n" });
    expect(viewer.status).toBe(403);
    process.env.CONSOLE_READ_ONLY = "true";
    try {
      const readOnly = await post(acknowledgeRoute, URL_PATH, await bearer("admin"), { provider, note: "n" });
      expect(readOnly.status).toBe(403);
      expect(await readOnly.text()).toContain("read-only");
    } finally {
      delete process.env.CONSOLE_READ_ONLY;
    }
    const noNote = await post(acknowledgeRoute, URL_PATH, await bearer(), { provider });
    expect(noNote.status).toBe(400);
    expect(await noNote.text()).toContain("note");
    const badKind = await post(acknowledgeRoute, URL_PATH, await bearer(), { provider, kind: "everything", dryRun: true });
    expect(badKind.status).toBe(400);
    expect(await badKind.text()).toContain("kind");
    const backwards = await post(acknowledgeRoute, URL_PATH, await bearer(), {
      from: "2026-12-02T00:00:00Z",
      to: "2026-12-01T00:00:00Z",
      dryRun: true,
    });
    expect(backwards.status).toBe(400);
    const rows = await db.pool.query("SELECT count(*)::int AS n FROM bulk_actions WHERE tenant_id = $1", [tenant]);
    expect(rows.rows[0].n).toBe(0);
    expect((await findingStates(ids)).map((f) => f.state)).toEqual(["open", "open"]);
  });
});
