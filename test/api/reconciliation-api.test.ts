import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken } from "../../lib/auth/tokens";
import { getPrisma } from "../../lib/db/prisma";
import { RECON_SEED, seedReconciliation } from "../../lib/features/reconciliation/testing/seed-reconciliation";
import { writeStripeProvidersFile } from "../../lib/reconciliation/testing/harness";
import { createTestDatabase, type TestDatabase } from "../database";
import { callDocumented as call } from "./harness";

/**
 * The reconciliation API with a token of each role in three tenants and the platform: which token
 * may call what, that a tenant token reads only its tenant's findings (and never the tenantless
 * one), and that acknowledge/resolve write the state with their audit row.
 */
type Who = "acme-viewer" | "acme-operator" | "globex-operator" | "initech-viewer" | "platform-viewer" | "platform-admin";
const WHO: Who[] = ["acme-viewer", "acme-operator", "globex-operator", "initech-viewer", "platform-viewer", "platform-admin"];

describe("reconciliation API", () => {
  let db: TestDatabase;
  const tokens: Partial<Record<Who, string>> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    db = await createTestDatabase();
    process.env.DATABASE_URL = db.url;
    process.env.ONCEBOARD_SECRET = "r".repeat(40);
    process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
    process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
    process.env.ONCEBOARD_PROVIDERS_FILE = writeStripeProvidersFile();
    await seedReconciliation(db.pool);
    for (const who of WHO) {
      const [tenant, role] = who.split("-") as [string, "viewer" | "operator" | "admin"];
      tokens[who] = (await createToken({ name: who, tenantId: tenant === "platform" ? null : tenant, role })).secret;
    }
    const { rows } = await db.pool.query<{ id: string; tenant_id: string | null; kind: string }>(
      "SELECT id::text AS id, tenant_id, kind FROM reconciliation_findings",
    );
    for (const r of rows) ids[`${r.tenant_id ?? "none"}:${r.kind}`] = r.id;
  });
  afterAll(async () => {
    await getPrisma().$disconnect();
    await db.drop();
  });

  const as = (who: Who | "none"): Record<string, string> => (who === "none" ? {} : { authorization: `Bearer ${tokens[who]}` });
  const json = async (method: string, path: string, who: Who, body?: unknown) => {
    const response = await call(method, path, as(who), body);
    return { status: response.status, body: JSON.parse(response.text) };
  };

  it("every token reads its own tenant's findings only; the platform reads all, the tenantless one too", async () => {
    for (const who of ["acme-viewer", "initech-viewer"] as const) {
      const tenant = who.split("-")[0] as string;
      for (const path of ["/api/v1/reconciliation/findings", "/api/v1/reconciliation/findings?tenant=globex"]) {
        const { status, body } = await json("GET", path, who);
        expect(status).toBe(200);
        expect(body.tenant).toBe(tenant);
        expect(body.findings.map((f: { tenant: string }) => f.tenant)).toEqual(Array(RECON_SEED.perTenant).fill(tenant));
        expect(JSON.stringify(body)).not.toMatch(
          new RegExp(`orphan|${RECON_SEED.tenants.filter((t) => t !== tenant).join("|")}`),
        );
      }
    }
    const all = await json("GET", "/api/v1/reconciliation/findings?limit=200", "platform-viewer");
    expect(all.body.findings).toHaveLength(RECON_SEED.perTenant * 3 + 1);
    expect((await call("GET", "/api/v1/reconciliation/findings", {})).status).toBe(401);
  });

  it("filters are validated at the edge: a bad value is a 400 naming the field", async () => {
    const dup = await json("GET", "/api/v1/reconciliation/findings?kind=duplicated_at_provider", "platform-viewer");
    expect(dup.body.findings).toHaveLength(3);
    for (const [query, field] of [
      ["kind=double", "kind"],
      ["state=closed", "state"],
      ["from=yesterday", "from"],
      ["limit=0", "limit"],
      ["provider=%00", "provider"],
      ["cursor=nope", "cursor"],
    ] as const) {
      const { status, body } = await json("GET", `/api/v1/reconciliation/findings?${query}`, "acme-viewer");
      expect(status, query).toBe(400);
      expect(body.error.message, query).toContain(field);
    }
    const bad = await json("GET", "/api/v1/reconciliation/findings/not-an-id", "acme-viewer");
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toBe("id");
  });

  it("a finding's detail: both sides for its tenant; another tenant's and the tenantless one are 404 like a missing id", async () => {
    const id = ids["acme:duplicated_at_provider"];
    const { status, body } = await json("GET", `/api/v1/reconciliation/findings/${id}`, "acme-viewer");
    expect(status).toBe(200);
    expect(body.ours.key).toBe(RECON_SEED.duplicateKey("acme"));
    expect(body.theirs.map((t: { id: string }) => t.id)).toEqual(RECON_SEED.duplicateObjects("acme"));
    expect(JSON.stringify(body)).not.toContain(RECON_SEED.outcomeSecret("acme"));
    const other = await call("GET", `/api/v1/reconciliation/findings/${id}`, as("globex-operator"));
    const missing = await call("GET", "/api/v1/reconciliation/findings/999999999", as("globex-operator"));
    expect(other.status).toBe(404);
    expect(other.text).toBe(missing.text);
    expect(
      (await call("GET", `/api/v1/reconciliation/findings/${ids["none:unknown_to_onceboard"]}`, as("acme-viewer"))).status,
    ).toBe(404);
    expect(
      (await json("GET", `/api/v1/reconciliation/findings/${ids["none:unknown_to_onceboard"]}`, "platform-viewer")).status,
    ).toBe(200);
  });

  it("acknowledge and resolve: operators of the finding's tenant, with a note, audited; viewers 403 (audited too)", async () => {
    const id = ids["acme:missing_at_provider"];
    const path = `/api/v1/reconciliation/findings/${id}/acknowledge`;
    expect((await json("POST", path, "acme-viewer", { note: "looking" })).status).toBe(403);
    expect((await json("POST", path, "globex-operator", { note: "looking" })).status).toBe(404);
    const noNote = await json("POST", path, "acme-operator", {});
    expect(noNote.status).toBe(400);
    expect(noNote.body.error.message).toContain("note");
    expect((await json("POST", path, "acme-operator", "{not json")).status).toBe(400);
    const acked = await json("POST", path, "acme-operator", { note: "the provider lost it; re-capturing" });
    expect(acked.status).toBe(200);
    expect(acked.body.finding).toMatchObject({ state: "acknowledged", stateNote: "the provider lost it; re-capturing" });
    expect((await json("POST", path, "acme-operator", { note: "again" })).status).toBe(409);
    const resolved = await json("POST", `/api/v1/reconciliation/findings/${id}/resolve`, "acme-operator", {
      note: "captured again",
    });
    expect(resolved.body.finding.state).toBe("resolved");
    const open = await json("GET", "/api/v1/reconciliation/findings", "acme-viewer");
    expect(open.body.findings.map((f: { id: string }) => f.id)).not.toContain(id);
    const closed = await json("GET", "/api/v1/reconciliation/findings?state=resolved", "acme-viewer");
    expect(closed.body.findings.map((f: { id: string }) => f.id)).toEqual([id]);
    const audit = await db.pool.query<{ action: string; result: string }>(
      `SELECT action, result FROM audit_log
        WHERE (action LIKE 'reconciliation.finding.%' AND action <> 'reconciliation.finding.read')
           OR (action = 'write.refused' AND target LIKE '%/reconciliation/%')
        ORDER BY id`,
    );
    expect(audit.rows.map((r) => `${r.action} ${r.result}`)).toEqual([
      "write.refused refused",
      "reconciliation.finding.acknowledge not_found",
      "reconciliation.finding.acknowledge ok",
      "reconciliation.finding.acknowledge conflict",
      "reconciliation.finding.resolve ok",
    ]);
  });

  it("runs: every token sees progress; only platform tokens see the counts", async () => {
    const tenant = await json("GET", "/api/v1/reconciliation/runs", "acme-viewer");
    expect(tenant.status).toBe(200);
    expect(tenant.body.runs.map((r: { status: string }) => r.status)).toEqual(["running", "completed", "failed"]);
    expect(tenant.body.runs.every((r: { counts: unknown }) => r.counts === null)).toBe(true);
    const platform = await json("GET", "/api/v1/reconciliation/runs?provider=stripe", "platform-viewer");
    expect(platform.body.runs.map((r: { status: string }) => r.status)).toEqual(["running", "completed"]);
    expect(platform.body.runs[1].counts.duplicated_at_provider).toBe(3);
  });

  it("starting a run: platform admins only, the body validated, an unconfigured provider refused", async () => {
    const body = { provider: "stripe", from: "2026-11-30T00:00:00Z", to: "2026-12-01T00:00:00Z" };
    expect((await json("POST", "/api/v1/reconciliation/runs", "acme-operator", body)).status).toBe(403);
    expect((await json("POST", "/api/v1/reconciliation/runs", "platform-viewer", body)).status).toBe(403);
    const backwards = await json("POST", "/api/v1/reconciliation/runs", "platform-admin", {
      ...body,
      from: body.to,
      to: body.from,
    });
    expect(backwards.status).toBe(400);
    expect(backwards.body.error.message).toContain("from");
    const tooLong = await json("POST", "/api/v1/reconciliation/runs", "platform-admin", {
      ...body,
      from: "2026-11-01T00:00:00Z",
    });
    expect(tooLong.body.error.message).toContain("at most 7 days");
    const unknown = await json("POST", "/api/v1/reconciliation/runs", "platform-admin", { ...body, provider: "paypal" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe('no provider named "paypal": stripe');
    delete process.env.STRIPE_API_KEY;
    const unconfigured = await json("POST", "/api/v1/reconciliation/runs", "platform-admin", body);
    expect(unconfigured.status).toBe(409);
    expect(unconfigured.body.error.message).toContain("STRIPE_API_KEY");
    // No providers file: nothing to reconcile with, and the answer says what to set.
    delete process.env.ONCEBOARD_PROVIDERS_FILE;
    const none = await json("POST", "/api/v1/reconciliation/runs", "platform-admin", body);
    expect(none.status).toBe(404);
    expect(none.body.error.message).toBe('no provider named "stripe": none is configured (set ONCEBOARD_PROVIDERS_FILE)');
  });
});
