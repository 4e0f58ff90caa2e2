import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { announcePeerHeader, PEER_HEADER } from "../../lib/auth/client-ip";
import { openOidcSession } from "../../lib/auth/session";
import { createToken, revokeToken } from "../../lib/auth/tokens";
import { ensureEffectPartitions } from "../../lib/db/partitions";
import { getPrisma } from "../../lib/db/prisma";
import { startStripeServer } from "../../lib/demo/stripe-server";
import { releaseEffect } from "../../lib/features/keys-and-effects/release-effect";
import { KEYS_SEED, KEYS_SEED_DAYS_BACK, seedKeys } from "../../lib/features/keys-and-effects/testing/seed-keys";
import { seedReconciliation } from "../../lib/features/reconciliation/testing/seed-reconciliation";
import { GAPS_SEED_DAYS_BACK, GAPS_SEED_EXPECTED, seedGaps } from "../../lib/features/retention-and-gaps/testing/seed-gaps";
import { TOKEN_KEYSET } from "../../lib/features/tokens-and-sessions/admin-keysets";
import { writeStripeProvidersFile } from "../../lib/reconciliation/testing/harness";
import { OPERATIONS } from "../../lib/routes/openapi";
import { createConsoleTestDatabase, type TestDatabase } from "../database";
import { CHECKED_OPERATIONS, callDocumented as call } from "./harness";

/**
 * The token × tenant × endpoint matrix: every kind of token (each role of a tenant, the other
 * tenant, platform, expired, revoked, none) against every endpoint, with the status each must get
 * and, where it reads, proof that only its own tenant's rows come back.
 */
const { tenant: ACME, otherTenant: GLOBEX, orderId } = KEYS_SEED;
const CAPTURE = `capture:${orderId}`;
const enc = encodeURIComponent;

describe("API token × tenant × endpoint matrix", () => {
  let db: TestDatabase;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    db = await createConsoleTestDatabase("m");
    await ensureEffectPartitions(db.pool, { back: KEYS_SEED_DAYS_BACK + 1, ahead: 1 });
    await seedKeys(db.pool);
    await seedReconciliation(db.pool);
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, first_message_id, outcome, created_at)
       VALUES ('globex', 'secret:globex-only', 'x', 'completed', 'once', 'm', '{"GLOBEX":1}', now() - interval '1 hour')`,
    );
    const make = async (name: string, tenantId: string | null, role: "viewer" | "operator" | "admin", expiresAt?: Date) => {
      tokens[name] = (await createToken({ name, tenantId, role, expiresAt })).secret;
    };
    await make("acme-viewer", ACME, "viewer");
    await make("acme-operator", ACME, "operator");
    await make("acme-admin", ACME, "admin");
    await make("globex-viewer", GLOBEX, "viewer");
    await make("globex-operator", GLOBEX, "operator");
    await make("globex-admin", GLOBEX, "admin");
    await make("platform-viewer", null, "viewer");
    await make("platform-admin", null, "admin");
    await make("expired", ACME, "admin", new Date(Date.now() - 60_000));
    const revoked = await createToken({ name: "revoked", tenantId: ACME, role: "admin" });
    await revokeToken(revoked.token.id);
    tokens.revoked = revoked.secret;
  });
  afterAll(async () => {
    await getPrisma().$disconnect();
    await db.drop();
  });

  const as = (who: string): Record<string, string> =>
    who === "none" ? {} : { authorization: `Bearer ${tokens[who] ?? "ob_unknown"}` };

  // [endpoint, method, path, expected status per token]
  const WHO = [
    "none",
    "expired",
    "revoked",
    "acme-viewer",
    "acme-operator",
    "acme-admin",
    "globex-viewer",
    "globex-operator",
    "globex-admin",
    "platform-viewer",
    "platform-admin",
  ] as const;
  type Who = (typeof WHO)[number];
  const row = (values: Partial<Record<Who, number>>, rest: number): Record<Who, number> =>
    Object.fromEntries(
      WHO.map((w) => [w, w === "none" || w === "expired" || w === "revoked" ? 401 : (values[w] ?? rest)]),
    ) as Record<Who, number>;
  const TENANT_TOKENS_FORBIDDEN = Object.fromEntries(
    WHO.filter((w) => w.startsWith("acme") || w.startsWith("globex")).map((w) => [w, 403]),
  ) as Partial<Record<Who, number>>;
  const MATRIX: [string, string, string, Record<Who, number>][] = [
    // A platform token naming no tenant searches every tenant.
    ["search", "GET", `/api/v1/effects?q=${orderId}`, row({}, 200)],
    ["search in acme", "GET", `/api/v1/effects?q=${orderId}&tenant=acme`, row({}, 200)],
    ["read", "GET", `/api/v1/effects/${enc(CAPTURE)}`, row({ "platform-viewer": 400, "platform-admin": 400 }, 200)],
    ["read acme's", "GET", `/api/v1/effects/${enc(CAPTURE)}?tenant=acme`, row({}, 200)],
    [
      "read globex-only",
      "GET",
      `/api/v1/effects/${enc("secret:globex-only")}?tenant=globex`,
      row({ "acme-viewer": 404, "acme-operator": 404, "acme-admin": 404 }, 200),
    ],
    [
      "release at-most-once",
      "POST",
      `/api/v1/effects/${enc(KEYS_SEED.stuckAtMostOnceKey)}/release?tenant=acme`,
      row(
        {
          "acme-viewer": 403,
          "acme-operator": 409,
          "acme-admin": 409,
          "globex-viewer": 403,
          "globex-operator": 404,
          "globex-admin": 404,
          "platform-viewer": 403,
          "platform-admin": 409,
        },
        0,
      ),
    ],
    [
      "audit",
      "GET",
      "/api/v1/audit",
      row(
        { "acme-viewer": 403, "acme-operator": 403, "globex-viewer": 403, "globex-operator": 403, "platform-viewer": 403 },
        200,
      ),
    ],
    [
      "audit export",
      "GET",
      "/api/v1/audit/export?format=ndjson",
      row(
        { "acme-viewer": 403, "acme-operator": 403, "globex-viewer": 403, "globex-operator": 403, "platform-viewer": 403 },
        200,
      ),
    ],
    [
      "audit integrity",
      "GET",
      "/api/v1/audit/integrity",
      row(
        { "acme-viewer": 403, "acme-operator": 403, "globex-viewer": 403, "globex-operator": 403, "platform-viewer": 403 },
        200,
      ),
    ],
    [
      "tokens",
      "GET",
      "/api/v1/tokens",
      row(
        { "acme-viewer": 403, "acme-operator": 403, "globex-viewer": 403, "globex-operator": 403, "platform-viewer": 403 },
        200,
      ),
    ],
    [
      "sessions",
      "GET",
      "/api/v1/sessions",
      row(
        { "acme-viewer": 403, "acme-operator": 403, "globex-viewer": 403, "globex-operator": 403, "platform-viewer": 403 },
        200,
      ),
    ],
    ["overview", "GET", "/api/v1/overview", row({}, 200)],
    ["violations", "GET", "/api/v1/violations", row({}, 200)],
    ["violation totals", "GET", "/api/v1/violations/groups", row({}, 200)],
    // Browse by state: a platform token naming no tenant counts and lists every tenant's.
    ["effect states", "GET", "/api/v1/effect-states", row({}, 200)],
    ["failed effects", "GET", "/api/v1/effect-states/failed", row({}, 200)],
    ["key reuse refusals", "GET", "/api/v1/key-reuse-refusals", row({}, 200)],
    ["reconciliation runs", "GET", "/api/v1/reconciliation/runs", row({}, 200)],
    ["reconciliation windows", "GET", "/api/v1/reconciliation/windows", row({}, 200)],
    ["reconciliation findings", "GET", "/api/v1/reconciliation/findings?tenant=globex", row({}, 200)],
    [
      "acknowledge a missing finding",
      "POST",
      "/api/v1/reconciliation/findings/999999999/acknowledge",
      row({ "acme-viewer": 403, "globex-viewer": 403, "platform-viewer": 403 }, 400),
    ],
    [
      "bulk acknowledge without a body",
      "POST",
      "/api/v1/bulk/acknowledge-findings",
      row({ "acme-viewer": 403, "globex-viewer": 403, "platform-viewer": 403 }, 400),
    ],
    ["retention", "GET", "/api/v1/retention", row({}, 200)],
    // Platform-only data: row counts per partition, a worker's full /metrics (none configured here: 404).
    ["retention plan", "GET", "/api/v1/retention/plan", row(TENANT_TOKENS_FORBIDDEN, 200)],
    ["worker metrics", "GET", "/api/v1/workers/0/metrics", row(TENANT_TOKENS_FORBIDDEN, 404)],
    ["openapi", "GET", "/api/v1/openapi.json", row({}, 200)],
    ["gaps", "GET", "/api/v1/gaps", row({}, 200)],
    ["retention settings", "GET", "/api/v1/retention/settings", row({}, 200)],
    ["retention advice", "GET", "/api/v1/retention/advice", row(TENANT_TOKENS_FORBIDDEN, 200)],
    ["retention advice preview", "GET", "/api/v1/retention/advice/preview", row(TENANT_TOKENS_FORBIDDEN, 200)],
    // Viewers and operators lack the role; a tenant's admin the platform; the platform admin sent no body.
    [
      "retention advice apply",
      "POST",
      "/api/v1/retention/advice/apply",
      row({ ...TENANT_TOKENS_FORBIDDEN, "platform-viewer": 403 }, 400),
    ],
    ["workers", "GET", "/api/v1/workers", row({}, 200)],
    ["unknown", "GET", "/api/v1/nope/nothing", row({}, 404)],
    ["wrong method", "DELETE", "/api/v1/effects", row({}, 405)],
  ];

  for (const [name, method, path, expected] of MATRIX) {
    it(`${method} ${name}: the right status for every token`, async () => {
      const got: Record<string, number> = {};
      for (const who of WHO) {
        const response = await call(method, path, as(who));
        got[who] = response.status;
        // The export's 200 is its file (CSV or NDJSON); every other answer is JSON.
        const file = response.status === 200 && path.startsWith("/api/v1/audit/export");
        expect(response.headers.get("content-type") ?? "", `${who} ${path}`).toContain(
          file ? "application/x-ndjson" : "application/json",
        );
        // Never another tenant's data: globex's secrets never reach an acme token, and acme's never reach globex.
        if (who.startsWith("acme")) expect(response.text).not.toMatch(/GLOBEX|msg-e2e-4711-globex/);
        if (who.startsWith("globex")) expect(response.text).not.toMatch(/ch_e2e_1|msg-e2e-4711"|ledger_entries_order_id_key/);
      }
      // 405 and unknown paths are answered by withAuth-less handlers behind the proxy; in-process they skip 401.
      const want = method === "DELETE" ? Object.fromEntries(WHO.map((w) => [w, 405])) : expected;
      expect(got).toEqual(want);
    });
  }

  it("platform-only data answers a tenant token 403 naming why, and the Retention view leaves it out", async () => {
    const plan = await call("GET", "/api/v1/retention/plan", as("acme-viewer"));
    expect(JSON.parse(plan.text).error).toEqual({
      code: "FORBIDDEN",
      message: "the retention plan (row counts and sizes per partition) spans every tenant: it needs a platform token",
    });
    const metrics = await call("GET", "/api/metrics", as("acme-admin"));
    expect(metrics.status).toBe(403);
    expect(JSON.parse(metrics.text).error.message).toMatch(/console's metrics spans every tenant/);
    const platformMetrics = await call("GET", "/api/metrics", as("platform-viewer"));
    expect(platformMetrics.status).toBe(200);
    expect(platformMetrics.headers.get("content-type")).toContain("text/plain");
    expect((await call("GET", "/api/metrics", as("none"))).status).toBe(401);

    const tenantView = JSON.parse((await call("GET", "/api/v1/retention", as("acme-viewer"))).text);
    expect(tenantView).toMatchObject({ plan: null, liveWorkers: [], runs: [] });
    expect(tenantView.settings.retentionDays).toBeGreaterThan(0);
    const platformView = JSON.parse((await call("GET", "/api/v1/retention", as("platform-viewer"))).text);
    expect(platformView.plan.partitions.length).toBeGreaterThan(0);
  });

  it("a tenant token asking for another tenant gets its own tenant's rows", async () => {
    const response = await call("GET", `/api/v1/effects?q=${orderId}&tenant=globex`, as("acme-viewer"));
    const body = JSON.parse(response.text);
    expect(body.tenant).toBe(ACME);
    expect(body.effects.map((e: { key: string }) => e.key).sort()).toEqual(
      [`capture:${orderId}`, `mark-paid:${orderId}`, `receipt:${orderId}`].sort(),
    );
    const detail = JSON.parse((await call("GET", `/api/v1/effects/${enc(CAPTURE)}?tenant=globex`, as("acme-viewer"))).text);
    expect(detail.outcome.chargeId).toBe("ch_e2e_1");
  });

  it("another tenant's key answers 404 byte-for-byte like a missing key", async () => {
    const other = await call("GET", `/api/v1/effects/${enc("secret:globex-only")}`, as("acme-viewer"));
    const missing = await call("GET", `/api/v1/effects/${enc("secret:nothing-here")}`, as("acme-viewer"));
    expect(other.status).toBe(404);
    expect(other.text).toBe(missing.text);
    expect([...other.headers.entries()]).toEqual([...missing.headers.entries()]);
  });

  it("the detail answers the incident question: verdict, steps, redacted outcome, provider key, linked violation", async () => {
    const detail = JSON.parse((await call("GET", `/api/v1/effects/${enc(CAPTURE)}`, as("acme-viewer"))).text);
    expect(detail.verdict).toBe("ran once, 3 duplicates suppressed, last 49 s after the first");
    expect(detail.steps.map((s: { key: string }) => s.key)).toEqual([
      `capture:${orderId}`,
      `mark-paid:${orderId}`,
      `receipt:${orderId}`,
    ]);
    expect(detail.outcome.card).toBe("[redacted]");
    expect(detail.outcome.memo).toBe("charged [card …1111]");
    expect(detail.outcome.customerPhone).toBe("[redacted]");
    expect(detail.outcome.receiptTo).toBe("[email]");
    expect(detail.outcome.note).toBe("paid by [email]");
    expect(detail.outcome.amount).toBe(4200);
    expect(detail.providerKey).toMatch(/\S/);
    expect(detail.firstMessageId).toBe(KEYS_SEED.messageId);
    // The capture step had no violation of its own: its job's mark-paid did.
    expect(detail.violations).toEqual([]);
  });

  it("the detail returns the key's deliveries oldest first: the first marked, gaps, a takeover, never another tenant's", async () => {
    type TimelineDelivery = { answer: string; first: boolean; gapSeconds: number | null; worker: string; effectAttempt: number };
    const detail = JSON.parse((await call("GET", `/api/v1/effects/${enc(CAPTURE)}`, as("acme-viewer"))).text);
    expect(detail.timelineTotal).toBe(4);
    expect(detail.timeline.map((d: TimelineDelivery) => [d.answer, d.first, d.gapSeconds, d.worker])).toEqual([
      ["claimed", true, null, "worker-a"],
      ["waited", false, 0.5, "worker-b"],
      ["duplicate", false, 29.5, "worker-a"],
      ["duplicate", false, 19, "worker-b"],
    ]);
    const globex = JSON.parse((await call("GET", `/api/v1/effects/${enc(CAPTURE)}?tenant=globex`, as("platform-viewer"))).text);
    expect(globex.timeline.map((d: TimelineDelivery) => [d.answer, d.worker])).toEqual([["claimed", "worker-globex"]]);
    const takenOver = JSON.parse((await call("GET", `/api/v1/effects/${enc(KEYS_SEED.takeoverKey)}`, as("acme-viewer"))).text);
    expect(takenOver.timeline.map((d: TimelineDelivery) => [d.answer, d.first, d.effectAttempt, d.worker])).toEqual([
      ["claimed", true, 1, "worker-dead"],
      ["takeover", false, 2, "worker-b"],
      ["duplicate", false, 2, "worker-a"],
    ]);
  });

  it("a key's detail lists its own violations only, their messages redacted", async () => {
    const markPaid = JSON.parse((await call("GET", `/api/v1/effects/${enc(`mark-paid:${orderId}`)}`, as("acme-viewer"))).text);
    expect(markPaid.violations).toEqual([
      expect.objectContaining({
        tenant: "acme",
        key: `mark-paid:${orderId}`,
        constraint: "ledger_entries_order_id_key",
        messageId: KEYS_SEED.messageId,
        message: 'duplicate key value violates unique constraint "ledger_entries_order_id_key" (billing [email])',
      }),
    ]);
  });

  it("GET /api/v1/violations lists every affected key of the caller's tenant only", async () => {
    const acme = JSON.parse((await call("GET", "/api/v1/violations", as("acme-viewer"))).text);
    expect(acme.tenant).toBe("acme");
    expect(acme.violations.map((v: { key: string }) => v.key).sort()).toEqual(
      [`mark-paid:${orderId}`, KEYS_SEED.otherViolationKey].sort(),
    );
    // A tenant token's ?tenant= names nothing else.
    const asked = JSON.parse((await call("GET", "/api/v1/violations?tenant=globex", as("acme-viewer"))).text);
    expect(asked.violations.every((v: { tenant: string }) => v.tenant === "acme")).toBe(true);
    const page = JSON.parse((await call("GET", "/api/v1/violations?limit=1", as("acme-viewer"))).text);
    expect(page.violations).toHaveLength(1);
    const next = JSON.parse((await call("GET", `/api/v1/violations?limit=1&cursor=${page.nextCursor}`, as("acme-viewer"))).text);
    expect(next.violations).toHaveLength(1);
    expect(next.violations[0].id).not.toBe(page.violations[0].id);
    expect(next.nextCursor).toBeNull();
    const bad = await call("GET", "/api/v1/violations?cursor=nope", as("acme-viewer"));
    expect(bad.status).toBe(400);
    const filtered = JSON.parse((await call("GET", "/api/v1/violations?constraint=globex_only_key", as("acme-viewer"))).text);
    expect(filtered.violations).toEqual([]);
  });

  it("keys with / % ? # spaces and non-ASCII round-trip", async () => {
    for (const key of KEYS_SEED.oddKeys) {
      const response = await call("GET", `/api/v1/effects/${enc(key)}`, as("acme-viewer"));
      expect(response.status, key).toBe(200);
      expect(JSON.parse(response.text).key).toBe(key);
    }
    const bad = await call("GET", "/api/v1/effects/%E0%A4%A", as("acme-viewer"));
    expect(bad.status).toBe(400);
  });

  it("search: fragment and prefix, filters, keyset pages newest first", async () => {
    const all = JSON.parse((await call("GET", "/api/v1/effects?q=ODD:&limit=2", as("acme-viewer"))).text);
    expect(all.effects).toHaveLength(2);
    expect(all.nextCursor).toBeTruthy();
    const next = JSON.parse(
      (await call("GET", `/api/v1/effects?q=odd:&limit=2&cursor=${all.nextCursor}`, as("acme-viewer"))).text,
    );
    const keys = [...all.effects, ...next.effects].map((e: { key: string }) => e.key);
    expect(keys).toEqual([...KEYS_SEED.oddKeys].reverse());
    expect(next.nextCursor).toBeNull();
    const stuck = JSON.parse(
      (await call("GET", "/api/v1/effects?status=in_progress&jobType=capture-payment", as("acme-viewer"))).text,
    );
    expect(stuck.effects.map((e: { key: string }) => e.key)).toEqual([KEYS_SEED.stuckKey]);
    expect((await call("GET", "/api/v1/effects?cursor=garbage", as("acme-viewer"))).status).toBe(400);
    expect((await call("GET", "/api/v1/effects?from=yesterday", as("acme-viewer"))).status).toBe(400);
    expect((await call("GET", "/api/v1/effects?q=50%25", as("acme-viewer"))).text).toContain("odd:50% off & more");
  });

  it("release: an expired external claim is released (audited); a second release and a completed effect are refused", async () => {
    const path = `/api/v1/effects/${enc(KEYS_SEED.stuckKey)}/release`;
    const first = await call("POST", path, as("acme-operator"));
    expect(first.status).toBe(200);
    expect(JSON.parse(first.text).message).toMatch(/attempt 2/);
    const { rows } = await db.pool.query("SELECT status, lease_until, error FROM effects WHERE tenant_id = 'acme' AND key = $1", [
      KEYS_SEED.stuckKey,
    ]);
    expect(rows[0]).toMatchObject({ status: "failed", lease_until: null });
    const again = await call("POST", path, as("acme-operator"));
    expect(again.status).toBe(409);
    const completed = await call("POST", `/api/v1/effects/${enc(CAPTURE)}/release`, as("acme-admin"));
    expect(completed.status).toBe(409);
    expect(JSON.parse(completed.text).error.message).toMatch(/completed/);
    const amo = await call("POST", `/api/v1/effects/${enc(KEYS_SEED.stuckAtMostOnceKey)}/release`, as("acme-admin"));
    expect(JSON.parse(amo.text).error.message).toMatch(/abandoned/);
    const audit = await db.pool.query(
      "SELECT result FROM audit_log WHERE action = 'effect.release' AND target = $1 ORDER BY id",
      [KEYS_SEED.stuckKey],
    );
    expect(audit.rows.map((r) => r.result)).toEqual(["ok", "not_in_progress"]);
  });

  it("a live lease is refused; a release whose audit row cannot be written does not happen", async () => {
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, lease_until, created_at)
       VALUES ('acme', 'capture:live', 'capture-payment', 'in_progress', 'external', 'w1', now() + interval '1 hour', now()),
              ('acme', 'capture:expired', 'capture-payment', 'in_progress', 'external', 'w2', now() - interval '1 minute', now())`,
    );
    const live = await call("POST", `/api/v1/effects/${enc("capture:live")}/release`, as("acme-operator"));
    expect(live.status).toBe(409);
    expect(JSON.parse(live.text).error.message).toMatch(/alive/);
    // The audit insert fails (token id is not a uuid): the release in the same transaction rolls back.
    await expect(
      releaseEffect({
        principal: { tokenId: "not-a-uuid", actor: "x", tenantId: "acme", role: "operator" },
        tenant: "acme",
        key: "capture:expired",
        ip: null,
      }),
    ).rejects.toThrow();
    const { rows } = await db.pool.query("SELECT status FROM effects WHERE key = 'capture:expired'");
    expect(rows[0].status).toBe("in_progress");
  });

  it("every key read is audited, found or not, with who, token, tenant, key and address", async () => {
    // The address is the TCP peer, as the console's server records it (a forged X-Forwarded-For is not it).
    announcePeerHeader();
    await call("GET", `/api/v1/effects/${enc("secret:globex-only")}`, {
      ...as("acme-viewer"),
      [PEER_HEADER]: "203.0.113.9",
      "x-forwarded-for": "198.51.100.99",
    });
    const { rows } = await db.pool.query(
      "SELECT actor, token_id, tenant_id, target, action, result, ip, at FROM audit_log WHERE ip = '203.0.113.9'",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      tenant_id: "acme",
      target: "secret:globex-only",
      action: "effect.read",
      result: "not_found",
    });
    expect(rows[0].actor).toMatch(/^acme-viewer \(…/);
    expect(rows[0].token_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("audit: a tenant admin sees only its tenant's rows; pages by cursor", async () => {
    const body = JSON.parse((await call("GET", "/api/v1/audit?limit=5", as("globex-admin"))).text);
    expect(body.entries.length).toBeGreaterThan(0);
    for (const entry of body.entries) expect(entry.tenantId).toBe(GLOBEX);
    const platform = JSON.parse((await call("GET", "/api/v1/audit?limit=3", as("platform-admin"))).text);
    const page2 = JSON.parse(
      (await call("GET", `/api/v1/audit?limit=3&cursor=${platform.nextCursor}`, as("platform-admin"))).text,
    );
    expect(Number(page2.entries[0].id)).toBeLessThan(Number(platform.entries[2].id));
  });

  it("a tenant token sees its own numbers, or is told what is withheld: overview, workers, runs, audit, health", async () => {
    // The fleet-only figures of the Overview: withheld and listed, not shown as every tenant's.
    const overview = JSON.parse((await call("GET", "/api/v1/overview?window=24h", as("acme-viewer"))).text);
    expect(overview.totals).toMatchObject({ deliveries: null, redeliveries: null, claims: null });
    expect(overview.alerts).toEqual([]);
    expect(overview.withheld).toEqual(expect.arrayContaining(["totals.deliveries", "alerts", "series.claimRate"]));
    expect(overview.jobTypes.every((j: { claims: number | null }) => j.claims === null)).toBe(true);
    const fleet = JSON.parse((await call("GET", "/api/v1/overview?window=24h&tenant=acme", as("platform-viewer"))).text);
    expect(fleet.withheld).toEqual([]);
    expect(typeof fleet.totals.deliveries).toBe("number");

    // Workers: their internal addresses and fleet-wide counters, for the platform only.
    const previous = process.env.WORKER_METRICS_URLS;
    process.env.WORKER_METRICS_URLS = "http://127.0.0.1:9/metrics";
    try {
      const workers = JSON.parse((await call("GET", "/api/v1/workers", as("acme-viewer"))).text);
      expect(workers.workers).toEqual([]);
      expect(workers.withheld).toMatch(/not shown to a tenant/);
      expect(JSON.stringify(workers)).not.toContain("127.0.0.1");
    } finally {
      if (previous === undefined) delete process.env.WORKER_METRICS_URLS;
      else process.env.WORKER_METRICS_URLS = previous;
    }

    // Reconciliation runs: a run's tallies count every tenant.
    const runs = JSON.parse((await call("GET", "/api/v1/reconciliation/runs", as("acme-viewer"))).text);
    expect(runs.runs.length).toBeGreaterThan(0);
    for (const run of runs.runs)
      expect([run.objectsSeen, run.effectsSeen, run.matched, run.counts]).toEqual([null, null, null, null]);
    const platformRuns = JSON.parse((await call("GET", "/api/v1/reconciliation/runs", as("platform-viewer"))).text);
    expect(typeof platformRuns.runs[0].objectsSeen).toBe("number");

    // Audit: the platform admin read one of acme's keys; acme's admin sees that it happened, not the platform's token.
    await call("GET", `/api/v1/effects/${enc(`capture:${KEYS_SEED.orderId}`)}?tenant=acme`, as("platform-admin"));
    await call("GET", `/api/v1/effects/${enc(`capture:${KEYS_SEED.orderId}`)}`, as("acme-admin"));
    const { rows: tokenRows } = await db.pool.query<{ id: string; tenant_id: string | null }>(
      "SELECT id::text, tenant_id FROM api_tokens WHERE name IN ('platform-admin', 'acme-admin')",
    );
    const platformTokenId = tokenRows.find((t) => t.tenant_id === null)!.id;
    const acmeTokenId = tokenRows.find((t) => t.tenant_id === ACME)!.id;
    const audit = JSON.parse((await call("GET", "/api/v1/audit?limit=100&action=effect.read", as("acme-admin"))).text);
    const reads = audit.entries as { tokenId: string | null; actor: string; ip: string | null }[];
    expect(reads.some((e) => e.tokenId === acmeTokenId)).toBe(true);
    expect(reads.some((e) => e.actor.startsWith("withheld:") && e.tokenId === null && e.ip === null)).toBe(true);
    for (const format of ["csv", "ndjson"]) {
      const exported = await call("GET", `/api/v1/audit/export?format=${format}`, as("acme-admin"));
      expect(exported.status, exported.text).toBe(200);
      expect(exported.text).toContain(acmeTokenId);
      expect(exported.text).not.toContain(platformTokenId);
      expect(exported.text).not.toContain("platform-admin");
    }
    // Nor can acme find the platform's rows by the actor's name.
    const byName = JSON.parse((await call("GET", "/api/v1/audit?limit=100&actor=platform-admin", as("acme-admin"))).text);
    expect(byName.entries).toEqual([]);
    const exportedByName = await call("GET", "/api/v1/audit/export?format=ndjson&actor=platform-admin", as("acme-admin"));
    expect(exportedByName.text.trim()).toBe("");
    const platformAudit = await call("GET", "/api/v1/audit?limit=100&action=effect.read", as("platform-admin"));
    expect(platformAudit.text).toContain(platformTokenId);

    // Health: whether PostgreSQL answers, and nothing about versions.
    const health = await call("GET", "/api/v1/health");
    expect(health.status).toBe(200);
    expect(Object.keys(JSON.parse(health.text).database)).toEqual(["latencyMs"]);
    expect(health.text).not.toMatch(/version/i);
  });

  it("a slow query becomes a clear 504, not a hung request", async () => {
    const { getPool } = await import("../../lib/db/pool");
    const pool = getPool();
    const original = pool.query.bind(pool);
    // The console's queries carry statement_timeout; provoke one with a tiny timeout on the real server.
    // A query is its text, or a named statement ({ name, text, values }).
    (pool as unknown as { query: unknown }).query = (query: string | { text: string }, values?: unknown[]) =>
      (typeof query === "string" ? query : query.text).includes("FROM effects")
        ? original("SET statement_timeout = 1; SELECT pg_sleep(0.2)").finally(() => original("SET statement_timeout = 0"))
        : original(query as string, values);
    try {
      const response = await call("GET", "/api/v1/effects?q=x", as("acme-viewer"));
      expect(response.status).toBe(504);
      expect(JSON.parse(response.text).error.code).toBe("QUERY_TIMEOUT");
    } finally {
      (pool as unknown as { query: unknown }).query = original;
    }
  });

  it("the platform admin's writes and the public health answer as documented", async () => {
    const settings = await call(
      "PUT",
      "/api/v1/retention/settings",
      { ...as("platform-admin"), origin: "http://console.test" },
      {},
    );
    expect(settings.status, settings.text).toBe(200);
    const apply = await call("POST", "/api/v1/retention/apply", { ...as("platform-admin"), origin: "http://console.test" });
    expect(apply.status, apply.text).toBe(200);

    // The advice's Apply: preview, confirm, and the same confirm again (stale: the settings moved).
    await ensureEffectPartitions(db.pool, { back: GAPS_SEED_DAYS_BACK + 1, ahead: 1 });
    await seedGaps(db.pool);
    const admin = { ...as("platform-admin"), origin: "http://console.test" };
    const preview = await call("GET", "/api/v1/retention/advice/preview", as("platform-viewer"));
    expect(preview.status, preview.text).toBe(200);
    const { change } = JSON.parse(preview.text) as { change: { before: object; after: { retentionDays: number } } };
    expect(change.after.retentionDays).toBe(GAPS_SEED_EXPECTED.recommendedDays);
    const confirm = { retentionDays: change.after.retentionDays, expect: change.before };
    process.env.CONSOLE_READ_ONLY = "true";
    try {
      const readOnly = await call("POST", "/api/v1/retention/advice/apply", admin, confirm);
      expect(readOnly.status).toBe(403);
      expect(readOnly.text).toContain("CONSOLE_READ_ONLY=true");
    } finally {
      delete process.env.CONSOLE_READ_ONLY;
    }
    const applied = await call("POST", "/api/v1/retention/advice/apply", admin, confirm);
    expect(applied.status, applied.text).toBe(200);
    const again = await call("POST", "/api/v1/retention/advice/apply", admin, confirm);
    expect(again.status).toBe(409);
    expect(JSON.parse(again.text).error.code).toBe("RETENTION_STALE");
    // A refusal's issues name the setting in the way and the value it must reach.
    const refused = await call("PUT", "/api/v1/retention/settings", admin, { retentionDays: 2 });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text).error.issues).toEqual([
      { path: "maxRetryWindowDays", message: "lower it first to 2 or less (now 3), once no worker retries for longer" },
    ]);
    expect((await call("GET", "/api/v1/health")).status).toBe(200);
  });

  it("a finding's detail, its acknowledge and resolve, and a started reconciliation answer as documented", async () => {
    const { rows } = await db.pool.query<{ id: string }>(
      "SELECT id::text AS id FROM reconciliation_findings WHERE tenant_id = $1 AND state = 'open' ORDER BY id LIMIT 1",
      [ACME],
    );
    const id = rows[0]?.id;
    expect(id).toBeDefined();
    const write = { ...as("acme-operator"), origin: "http://console.test" };
    const detail = await call("GET", `/api/v1/reconciliation/findings/${id}`, as("acme-viewer"));
    expect(detail.status, detail.text).toBe(200);
    const acked = await call("POST", `/api/v1/reconciliation/findings/${id}/acknowledge`, write, { note: "looking" });
    expect(acked.status, acked.text).toBe(200);
    const resolved = await call("POST", `/api/v1/reconciliation/findings/${id}/resolve`, write, { note: "done" });
    expect(resolved.status, resolved.text).toBe(200);

    // A run needs a provider to list: the demo's Stripe-compatible server, on this test database.
    const stripe = await startStripeServer({ databaseUrl: db.url, apiKeys: ["sk_test_matrix"] });
    const saved = { ...process.env };
    Object.assign(process.env, {
      ONCEBOARD_PROVIDERS_FILE: writeStripeProvidersFile(),
      STRIPE_API_KEY: "sk_test_matrix",
      STRIPE_HOST: "127.0.0.1",
      STRIPE_PORT: String(stripe.port),
      STRIPE_PROTOCOL: "http",
    });
    try {
      const to = new Date(Date.now() - 3 * 86_400_000);
      const from = new Date(to.getTime() - 3_600_000);
      const started = await call(
        "POST",
        "/api/v1/reconciliation/runs",
        { ...as("platform-admin"), origin: "http://console.test" },
        { provider: "stripe", from: from.toISOString(), to: to.toISOString() },
      );
      expect(started.status, started.text).toBe(202);
      // The run goes on after the answer: wait for it before the provider stops.
      const runId = (JSON.parse(started.text) as { run: { id: string } }).run.id;
      for (let i = 0; i < 200; i++) {
        const { rows: run } = await db.pool.query<{ status: string }>(
          "SELECT status FROM reconciliation_runs WHERE id = $1::bigint",
          [runId],
        );
        if (run[0]?.status !== "running") break;
        await sleep(100);
      }
    } finally {
      for (const name of ["ONCEBOARD_PROVIDERS_FILE", "STRIPE_API_KEY", "STRIPE_HOST", "STRIPE_PORT", "STRIPE_PROTOCOL"]) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
      await stripe.close();
    }
  });

  it("admin writes and bulk release answer as documented; OIDC sessions are listed and revoked within their tenant", async () => {
    const write = (who: string) => ({ ...as(who), origin: "http://console.test" });
    const created = await call("POST", "/api/v1/tokens", write("acme-admin"), { name: "matrix-made", role: "viewer" });
    expect(created.status, created.text).toBe(201);
    const { token } = JSON.parse(created.text) as { token: { id: string; tenantId: string | null } };
    expect(token.tenantId).toBe(ACME);
    const revokedToken = await call("POST", `/api/v1/tokens/${token.id}/revoke`, write("acme-admin"));
    expect(revokedToken.status, revokedToken.text).toBe(200);

    // An OIDC session: no token; its actor, role and tenant are on the row.
    await openOidcSession(
      {
        issuer: "https://idp.test",
        subject: "sub-1",
        actor: "Ada <ada@acme.test> (oidc:sub-1)",
        role: "operator",
        tenantId: ACME,
        idTokenExpiresAt: new Date(Date.now() + 3_600_000),
        idToken: "id-token",
      },
      { ip: null },
    );
    const listed = await call("GET", "/api/v1/sessions", as("acme-admin"));
    expect(listed.status, listed.text).toBe(200);
    const oidc = (
      JSON.parse(listed.text) as { sessions: { id: string; tokenId: string | null; actor: string; role: string }[] }
    ).sessions.find((session) => session.tokenId === null);
    expect(oidc).toMatchObject({ actor: "Ada <ada@acme.test> (oidc:sub-1)", role: "operator" });
    const globexSees = JSON.parse((await call("GET", "/api/v1/sessions", as("globex-admin"))).text) as {
      sessions: { id: string }[];
    };
    expect(globexSees.sessions.map((session) => session.id)).not.toContain(oidc?.id);
    expect((await call("POST", `/api/v1/sessions/${oidc?.id}/revoke`, write("globex-admin"))).status).toBe(404);
    const revokedSession = await call("POST", `/api/v1/sessions/${oidc?.id}/revoke`, write("acme-admin"));
    expect(revokedSession.status, revokedSession.text).toBe(200);

    const dryRun = await call("POST", "/api/v1/bulk/release", write("acme-operator"), { dryRun: true });
    expect(dryRun.status, dryRun.text).toBe(200);
    expect((JSON.parse(dryRun.text) as { count: number }).count).toBeGreaterThan(0);
    // No runner in this process: the action stays queued until it is cancelled.
    const started = await call("POST", "/api/v1/bulk/release", write("acme-operator"), {});
    expect(started.status, started.text).toBe(202);
    const { action } = JSON.parse(started.text) as { action: { id: string } };
    expect((await call("GET", `/api/v1/bulk/${action.id}`, as("acme-viewer"))).status).toBe(200);
    // Its items, a page of one at a time: each key once, in run order, pending (nothing ran them).
    const itemKeys: string[] = [];
    let itemsUrl: string | null = `/api/v1/bulk/${action.id}/items?limit=1`;
    while (itemsUrl) {
      const itemsPage = await call("GET", itemsUrl, as("acme-viewer"));
      expect(itemsPage.status, itemsPage.text).toBe(200);
      const body = JSON.parse(itemsPage.text) as { items: { key: string; status: string }[]; nextCursor: string | null };
      expect(body.items.every((item) => item.status === "pending")).toBe(true);
      itemKeys.push(...body.items.map((item) => item.key));
      itemsUrl = body.nextCursor ? `/api/v1/bulk/${action.id}/items?limit=1&cursor=${body.nextCursor}` : null;
    }
    expect(itemKeys.length).toBe((JSON.parse(dryRun.text) as { count: number }).count);
    expect(new Set(itemKeys).size).toBe(itemKeys.length);
    expect((await call("GET", `/api/v1/bulk/${action.id}/items`, as("globex-viewer"))).status).toBe(404);
    // The tokens list's cursor is not one of this list's.
    const tokensCursor = TOKEN_KEYSET.encode(["1"]);
    const foreignCursor = await call("GET", `/api/v1/bulk/${action.id}/items?cursor=${tokensCursor}`, as("acme-viewer"));
    expect(foreignCursor.status, foreignCursor.text).toBe(400);
    expect(foreignCursor.text).toContain("cursor");
    const cancelled = await call("POST", `/api/v1/bulk/${action.id}/cancel`, write("acme-operator"));
    expect(cancelled.status, cancelled.text).toBe(200);

    // The bulk acknowledge: a dry run of acme's open drift findings, then a queued action, cancelled.
    const ackDryRun = await call("POST", "/api/v1/bulk/acknowledge-findings", write("acme-operator"), {
      kind: "drift",
      dryRun: true,
    });
    expect(ackDryRun.status, ackDryRun.text).toBe(200);
    const counted = JSON.parse(ackDryRun.text) as { tenant: string; count: number; sample: { tenant: string; kind: string }[] };
    expect(counted.tenant).toBe(ACME);
    expect(counted.count).toBeGreaterThan(0);
    expect(counted.sample.every((f) => f.tenant === ACME && f.kind === "drift")).toBe(true);
    const noNote = await call("POST", "/api/v1/bulk/acknowledge-findings", write("acme-operator"), { kind: "drift" });
    expect(noNote.status, noNote.text).toBe(400);
    expect(noNote.text).toContain("note");
    const ack = await call("POST", "/api/v1/bulk/acknowledge-findings", write("acme-operator"), {
      kind: "drift",
      note: "matrix",
    });
    expect(ack.status, ack.text).toBe(202);
    const ackAction = (JSON.parse(ack.text) as { action: { id: string; kind: string; tenant: string } }).action;
    expect(ackAction).toMatchObject({ kind: "acknowledge_findings", tenant: ACME });
    expect((await call("GET", `/api/v1/bulk/${ackAction.id}`, as("globex-operator"))).status).toBe(404);
    expect((await call("POST", `/api/v1/bulk/${ackAction.id}/cancel`, write("acme-operator"))).status).toBe(200);
  });

  // Last: the tests above have called every route; each documented 200 was checked against its schema.
  it("every documented operation answered a real request with its documented schema", () => {
    const documented = Object.entries(OPERATIONS).flatMap(([template, methods]) =>
      Object.keys(methods)
        .map((method) => `${method.toUpperCase()} ${template}`)
        // The worker's /metrics needs a worker running: test/server checks it against the demo's.
        .filter((operation) => operation !== "GET /api/v1/workers/{index}/metrics"),
    );
    expect([...CHECKED_OPERATIONS].sort()).toEqual(documented.sort());
  });
});
