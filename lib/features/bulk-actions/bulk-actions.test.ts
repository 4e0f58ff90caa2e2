import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as cancelRoute from "../../../app/api/v1/bulk/[id]/cancel/route";
import * as bulkRoute from "../../../app/api/v1/bulk/[id]/route";
import * as releaseRoute from "../../../app/api/v1/bulk/release/route";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { createToken } from "../../auth/tokens";
import { getPrisma } from "../../db/prisma";
import { runBulkActions, runOneBulkAction } from "./bulk-runner";
import type { BulkActionResponse, BulkDryRunResponse } from "./contract";
import { killRunnerMidway } from "./testing/kill-runner-midway";

/**
 * Bulk release of stuck claims through the API and the runner, on a real PostgreSQL: the dry run
 * counts what is released, the cap refuses more, cancel stops it, two runners never both apply an
 * item, and a runner process SIGKILLed mid-way is resumed with each key released exactly once.
 */
const CONSOLE = "http://console.test";
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
beforeEach(async () => {
  tenant = `t${randomBytes(3).toString("hex")}`;
  // One database for the file: an earlier test's unfinished action must not be the one a runner picks.
  await db.pool.query("UPDATE bulk_actions SET state = 'cancelled' WHERE state IN ('queued', 'running')");
});

/** `n` stuck claims (lease expired an hour ago) of `tenant`, keys stuck:<prefix>-<i>; plus decoys the filter must skip. */
async function seedStuck(n: number, prefix = "ord", jobType = "capture-payment") {
  await db.pool.query(
    `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id, last_message_id, created_at, updated_at)
     SELECT $1, 'stuck:' || $2 || '-' || g, $3, 'in_progress', 'external', 1, 'worker-dead', now() - interval '1 hour', 'm' || g, 'm' || g,
            now() - interval '2 hours', now() - interval '2 hours'
       FROM generate_series(1, $4::int) g`,
    [tenant, prefix, jobType, n],
  );
}

async function seedDecoys() {
  const rows: [string, string, string, string][] = [
    ["stuck:ord-live", "in_progress", "external", "now() + interval '1 hour'"],
    ["stuck:ord-once", "in_progress", "at_most_once", "now() - interval '1 hour'"],
    ["stuck:ord-done", "completed", "external", "now() - interval '1 hour'"],
  ];
  for (const [key, status, policy, lease] of rows) {
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id, last_message_id, created_at, updated_at)
       VALUES ($1, $2, 'capture-payment', $3, $4, 1, 'w', ${lease}, 'm', 'm', now() - interval '2 hours', now() - interval '2 hours')`,
      [tenant, key, status, policy],
    );
  }
}

async function bearer(role: "viewer" | "operator" | "admin" = "operator", tenantId: string | null = tenant) {
  const { secret } = await createToken({ name: `bulk-${role}-${randomBytes(3).toString("hex")}`, tenantId, role });
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

async function start(filter: Record<string, unknown>, headers?: Record<string, string>): Promise<BulkActionResponse["action"]> {
  const response = await post(releaseRoute, "/api/v1/bulk/release", headers ?? (await bearer()), filter);
  expect(response.status).toBe(202);
  return ((await response.json()) as BulkActionResponse).action;
}

async function releasesOf(actionId: string) {
  return (
    await db.pool.query<{ target: string; n: string; results: string }>(
      "SELECT target, count(*) AS n, string_agg(result, ',') AS results FROM audit_log WHERE action = 'effect.release' AND detail->>'bulkAction' = $1 GROUP BY target",
      [actionId],
    )
  ).rows;
}

async function stateOf(id: string) {
  return (await db.pool.query("SELECT state, processed, applied, total FROM bulk_actions WHERE id = $1", [id])).rows[0];
}

describe("bulk release", () => {
  it("the dry run counts and samples exactly what the action then releases, skipping live, at-most-once and completed claims", async () => {
    await seedStuck(7, "ord");
    await seedStuck(3, "other");
    await seedDecoys();
    const operator = await bearer();
    const dry = await post(releaseRoute, "/api/v1/bulk/release", operator, { q: "ORD", dryRun: true });
    expect(dry.status).toBe(200);
    const counted = (await dry.json()) as BulkDryRunResponse;
    expect(counted).toMatchObject({ dryRun: true, tenant, count: 7, overCap: false });
    expect(counted.sample.map((s) => s.key).sort()).toEqual(Array.from({ length: 7 }, (_, i) => `stuck:ord-${i + 1}`).sort());
    expect((await db.pool.query("SELECT count(*)::int AS n FROM bulk_actions")).rows[0].n).toBe(0);

    const action = await start({ q: "ORD" }, operator);
    expect(action).toMatchObject({ state: "queued", total: 7, tenant });
    await runBulkActions({ owner: "test-runner" });
    expect(await stateOf(action.id)).toMatchObject({ state: "done", processed: 7, applied: 7 });
    const released = await releasesOf(action.id);
    expect(released.map((r) => r.target).sort()).toEqual(counted.sample.map((s) => s.key).sort());
    const statuses = await db.pool.query("SELECT key, status FROM effects WHERE tenant_id = $1 ORDER BY key", [tenant]);
    expect(statuses.rows.filter((r) => r.status === "failed").map((r) => r.key)).toHaveLength(7);
    expect(statuses.rows.find((r) => r.key === "stuck:ord-live")?.status).toBe("in_progress");
    const own = await db.pool.query("SELECT action FROM audit_log WHERE target = $1 ORDER BY id", [action.id]);
    expect(own.rows.map((r) => r.action)).toEqual(["bulk.start", "bulk.finish"]);

    const progress = await bulkRoute.GET(
      new Request(`${CONSOLE}/api/v1/bulk/${action.id}`, { headers: await bearer("viewer") }),
      {
        params: Promise.resolve({ id: action.id }),
      },
    );
    expect(((await progress.json()) as BulkActionResponse).action).toMatchObject({ state: "done", processed: 7, applied: 7 });
    const foreign = await bulkRoute.GET(
      new Request(`${CONSOLE}/api/v1/bulk/${action.id}`, { headers: await bearer("admin", "elsewhere") }),
      {
        params: Promise.resolve({ id: action.id }),
      },
    );
    expect(foreign.status).toBe(404);
  });

  it("refuses a filter matching more than the cap (BULK_ACTION_MAX_ITEMS): the dry run says so, the action is never created", async () => {
    await seedStuck(6);
    process.env.BULK_ACTION_MAX_ITEMS = "5";
    try {
      const operator = await bearer();
      const dry = (await (
        await post(releaseRoute, "/api/v1/bulk/release", operator, { dryRun: true })
      ).json()) as BulkDryRunResponse;
      expect(dry).toMatchObject({ count: 6, cap: 5, overCap: true });
      const refused = await post(releaseRoute, "/api/v1/bulk/release", operator, {});
      expect(refused.status).toBe(409);
      expect(await refused.text()).toContain("BULK_ACTION_MAX_ITEMS");
      const rows = await db.pool.query("SELECT count(*)::int AS n FROM bulk_actions WHERE tenant_id = $1", [tenant]);
      expect(rows.rows[0].n).toBe(0);
      expect((await post(releaseRoute, "/api/v1/bulk/release", operator, { q: "ord-1" })).status).toBe(202);
    } finally {
      delete process.env.BULK_ACTION_MAX_ITEMS;
    }
  });

  it("cancel stops the action: no item is released after it commits, and it is audited", async () => {
    await seedStuck(20);
    const operator = await bearer();
    const action = await start({}, operator);
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
    expect(await releasesOf(action.id)).toHaveLength(5);
    expect(await runOneBulkAction({ owner: "another" })).toBe(-1);
    const audited = await db.pool.query("SELECT 1 FROM audit_log WHERE action = 'bulk.cancel' AND target = $1", [action.id]);
    expect(audited.rows).toHaveLength(1);
  });

  it("two runners at once never both release an item", async () => {
    await seedStuck(40);
    const action = await start({});
    await Promise.all([runBulkActions({ owner: "runner-a" }), runBulkActions({ owner: "runner-b" })]);
    expect(await stateOf(action.id)).toMatchObject({ state: "done", processed: 40, applied: 40 });
    const released = await releasesOf(action.id);
    expect(released).toHaveLength(40);
    expect(released.filter((r) => Number(r.n) !== 1)).toEqual([]);
  });

  it("a runner process SIGKILLed mid-way is resumed from its checkpoint: each key released exactly once", async () => {
    await seedStuck(60);
    const action = await start({});
    await killRunnerMidway(db.url);
    const midway = await stateOf(action.id);
    expect(midway.state).toBe("running");
    expect(midway.processed).toBeGreaterThanOrEqual(15);
    expect(midway.processed).toBeLessThan(60);

    // The dead runner's lease still holds: nobody takes the action over until it expires.
    for (let tries = 0; tries < 100 && (await stateOf(action.id)).state !== "done"; tries++) {
      if ((await runOneBulkAction({ owner: "restarted-console" })) === -1) await sleep(200);
    }
    expect(await stateOf(action.id)).toMatchObject({ state: "done", processed: 60, applied: 60 });
    const released = await releasesOf(action.id);
    expect(released).toHaveLength(60);
    expect(released.filter((r) => Number(r.n) !== 1)).toEqual([]);
    const attempts = await db.pool.query("SELECT count(*)::int AS n FROM effects WHERE tenant_id = $1 AND status = 'failed'", [
      tenant,
    ]);
    expect(attempts.rows[0].n).toBe(60);
  }, 60_000);

  it("five identical releases at once: one is accepted, the others answer 409 naming it; once it is over, another may start", async () => {
    await seedStuck(30);
    await seedStuck(5, "other");
    const headers = await Promise.all(Array.from({ length: 5 }, () => bearer()));
    // Each request on its own pooled connection, all in flight together: the race the database must settle.
    const responses = await Promise.all(headers.map((h) => post(releaseRoute, "/api/v1/bulk/release", h, { q: "ord" })));
    const bodies = await Promise.all(responses.map(async (r) => ({ status: r.status, text: await r.text() })));
    const accepted = bodies.filter((b) => b.status === 202);
    expect(accepted).toHaveLength(1);
    const first = (JSON.parse(accepted[0]?.text ?? "{}") as BulkActionResponse).action;
    const refused = bodies.filter((b) => b.status !== 202);
    expect(refused.map((b) => b.status)).toEqual([409, 409, 409, 409]);
    for (const b of refused) expect(b.text).toContain(first.id);
    const live = await db.pool.query("SELECT count(*)::int AS n FROM bulk_actions WHERE tenant_id = $1", [tenant]);
    expect(live.rows[0].n).toBe(1);

    // Another target set of the same tenant is not a twin.
    const other = await post(releaseRoute, "/api/v1/bulk/release", headers[0] ?? {}, { q: "other" });
    expect(other.status).toBe(202);
    // A filter spelled differently over the same items is: the items decide, not the filter's text.
    const respelled = await post(releaseRoute, "/api/v1/bulk/release", headers[0] ?? {}, {
      q: "ORD",
      jobType: "capture-payment",
    });
    expect(respelled.status).toBe(409);
    expect(await respelled.text()).toContain(first.id);

    const cancel = await post(cancelRoute, `/api/v1/bulk/${first.id}/cancel`, headers[0] ?? {}, undefined, { id: first.id });
    expect(cancel.status).toBe(200);
    expect((await post(releaseRoute, "/api/v1/bulk/release", headers[1] ?? {}, { q: "ord" })).status).toBe(202);
  });

  it("refuses a viewer (403) and a read-only console (403), writing nothing", async () => {
    await seedStuck(2);
    const viewer = await post(releaseRoute, "/api/v1/bulk/release", await bearer("viewer"), {});
    expect(viewer.status).toBe(403);
    process.env.CONSOLE_READ_ONLY = "true";
    try {
      const readOnly = await post(releaseRoute, "/api/v1/bulk/release", await bearer("admin"), {});
      expect(readOnly.status).toBe(403);
      expect(await readOnly.text()).toContain("read-only");
    } finally {
      delete process.env.CONSOLE_READ_ONLY;
    }
    const rows = await db.pool.query("SELECT count(*)::int AS n FROM bulk_actions WHERE tenant_id = $1", [tenant]);
    expect(rows.rows[0].n).toBe(0);
    const bad = await post(releaseRoute, "/api/v1/bulk/release", await bearer(), { dryRun: "yes", limit: 3 });
    expect(bad.status).toBe(400);
  });
});
