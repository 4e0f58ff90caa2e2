import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken } from "../../lib/auth/tokens";
import { HOSTILE_ERROR, HOSTILE_OUTCOME, HOSTILE_SECRETS } from "../../lib/console/testing/hostile-values";
import { ensureEffectPartitions } from "../../lib/db/partitions";
import { getPrisma } from "../../lib/db/prisma";
import { createTestDatabase, type TestDatabase } from "../database";
import { call } from "./harness";

/**
 * Every route that shows or exports a stored value, with secrets stored where a hostile review put
 * them (issue 35, finding 7): an effect's outcome and error, a violation's message, a finding's
 * recorded outcome and sentence, an audit row's note. None of HOSTILE_SECRETS reaches a caller.
 * And a finding, which shows an effect's key, provider key and outcome, is audited when opened,
 * like the same key opened on the Keys page.
 */
const KEY = "hostile:ord-1";

describe("stored values through every route", () => {
  let db: TestDatabase;
  let acme = "";
  let findingId = "";

  beforeAll(async () => {
    db = await createTestDatabase();
    process.env.DATABASE_URL = db.url;
    process.env.ONCEBOARD_SECRET = "v".repeat(40);
    process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
    process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
    await ensureEffectPartitions(db.pool, { back: 1, ahead: 1 });
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, first_message_id, last_message_id, outcome, error,
                            created_at, updated_at, completed_at)
       VALUES ('acme', $1, 'charge', 'failed', 'external', 1, 'm-1', 'm-1', $2, $3, now() - interval '1 hour',
               now() - interval '1 hour', now() - interval '1 hour')`,
      [KEY, JSON.stringify(HOSTILE_OUTCOME), HOSTILE_ERROR],
    );
    await db.pool.query(
      `INSERT INTO uncaught_violation_keys (occurred_at, tenant_id, job_type, constraint_name, key, message_id, message)
       VALUES (now() - interval '1 hour', 'acme', 'charge', 'charges_pkey', $1, 'm-1', $2)`,
      [KEY, HOSTILE_ERROR],
    );
    const finding = await db.pool.query<{ id: string }>(
      `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, job_type, effect_key, ours, detail, state_note)
       VALUES ('hostile-1', 'stripe', 'drift', 'acme', 'charge', $1, $2, $3, $3) RETURNING id::text AS id`,
      [
        KEY,
        JSON.stringify({ key: KEY, status: "completed", attempts: 1, outcome: HOSTILE_OUTCOME, provider_key: "acme:hostile" }),
        `amount differs: ${HOSTILE_ERROR}`,
      ],
    );
    findingId = finding.rows[0]?.id ?? "";
    await db.pool.query(
      `INSERT INTO audit_log (actor, tenant_id, action, target, detail, result)
       VALUES ('seed', 'acme', 'effect.release', $1, $2, 'ok')`,
      [KEY, JSON.stringify({ note: HOSTILE_ERROR, outcome: HOSTILE_OUTCOME })],
    );
    acme = (await createToken({ name: "stored-values", tenantId: "acme", role: "admin" })).secret;
  });
  afterAll(async () => {
    await getPrisma().$disconnect();
    await db.drop();
  });

  const get = (path: string) => call("GET", path, { authorization: `Bearer ${acme}` });

  it("no route shows or exports a stored secret", async () => {
    const routes = [
      `/api/v1/effects/${encodeURIComponent(KEY)}`,
      "/api/v1/effects?q=hostile",
      "/api/v1/violations",
      "/api/v1/violations/groups",
      "/api/v1/effect-states/failed",
      "/api/v1/reconciliation/findings",
      `/api/v1/reconciliation/findings/${findingId}`,
      "/api/v1/audit",
      "/api/v1/audit/export?format=csv",
      "/api/v1/audit/export?format=ndjson",
    ];
    const leaks: string[] = [];
    for (const route of routes) {
      const response = await get(route);
      expect(response.status, `${route}: ${response.text.slice(0, 300)}`).toBe(200);
      for (const secret of HOSTILE_SECRETS) if (response.text.includes(secret)) leaks.push(`${route} shows ${secret}`);
    }
    expect(leaks).toEqual([]);
    // What is shown still says what it was: masked, not dropped.
    const detail = JSON.parse((await get(`/api/v1/effects/${encodeURIComponent(KEY)}`)).text);
    expect(detail.outcome).toMatchObject({ stripeKey: "[secret key]", reference: "[card …1111]", kept: "ch_hostile_1 paid" });
    expect(detail.error).toContain("password=[redacted]");
    const failed = JSON.parse((await get("/api/v1/effect-states/failed")).text);
    expect(failed.effects[0].error).toContain("password=[redacted]");
  });

  it("opening a finding is audited like opening its key: once per view, ok or not_found (the page reads through the same readFindingAudited)", async () => {
    const reads = async () =>
      (
        await db.pool.query(
          "SELECT target, result, tenant_id, detail FROM audit_log WHERE action = 'reconciliation.finding.read' ORDER BY id",
        )
      ).rows;
    const before = (await reads()).length;
    expect((await get(`/api/v1/reconciliation/findings/${findingId}`)).status).toBe(200);
    expect((await get(`/api/v1/reconciliation/findings/${findingId}`)).status).toBe(200);
    expect((await get("/api/v1/reconciliation/findings/999999")).status).toBe(404);
    const after = (await reads()).slice(before);
    expect(after).toEqual([
      { target: findingId, result: "ok", tenant_id: "acme", detail: { effectKey: KEY, provider: "stripe" } },
      { target: findingId, result: "ok", tenant_id: "acme", detail: { effectKey: KEY, provider: "stripe" } },
      { target: "999999", result: "not_found", tenant_id: "acme", detail: null },
    ]);
    // The same key opened on Keys is audited as effect.read: both reads leave a row.
    await get(`/api/v1/effects/${encodeURIComponent(KEY)}`);
    const keyRead = await db.pool.query("SELECT 1 FROM audit_log WHERE action = 'effect.read' AND target = $1", [KEY]);
    expect(keyRead.rows.length).toBeGreaterThan(0);
  });
});
