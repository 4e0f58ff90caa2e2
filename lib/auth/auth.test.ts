import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { safeForLog } from "../api/log-safe";
import { getPrisma } from "../db/prisma";
import { appendAudit } from "./audit";
import { authenticate } from "./authenticate";
import { bootstrapLogin, bootstrapLoginReminder, ensureBootstrapAdmin } from "./bootstrap";
import { login } from "./login";
import { SESSION_COOKIE } from "./session";
import { createToken, findActiveToken, revokeToken } from "./tokens";
import { withAuth } from "./with-auth";

describe("lib/auth", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    process.env.DATABASE_URL = db.url;
    process.env.ONCEBOARD_SECRET = "x".repeat(40);
  });
  afterAll(async () => {
    await getPrisma().$disconnect();
    await db.drop();
  });

  const ok = withAuth<{ id: string }>("operator", async (_request, { principal, params }) =>
    Response.json({ principal, params }),
  );
  const call = (headers: Record<string, string>, method = "GET") =>
    ok(new Request("http://console.test/api/v1/x", { method, headers: { host: "console.test", ...headers } }), {
      params: Promise.resolve({ id: "1" }),
    });

  it("stores tokens hashed, finds active ones, refuses revoked and expired ones", async () => {
    const { token, secret } = await createToken({ name: "t", tenantId: "acme", role: "viewer" });
    const { rows } = await db.pool.query("SELECT token_hash, prefix FROM api_tokens WHERE id = $1", [token.id]);
    expect(rows[0].token_hash).not.toContain(secret.slice(3));
    expect(rows[0].token_hash).toHaveLength(64);
    expect(rows[0].prefix).toBe(secret.slice(-6));
    expect((await findActiveToken(secret))?.id).toBe(token.id);
    expect(await revokeToken(token.id)).toBe(true);
    expect(await findActiveToken(secret)).toBeNull();
    const expired = await createToken({ name: "e", tenantId: "acme", role: "viewer", expiresAt: new Date(Date.now() - 1000) });
    expect(await findActiveToken(expired.secret)).toBeNull();
  });

  it("withAuth: 401 without credentials, 403 below the role, the principal otherwise", async () => {
    const viewer = await createToken({ name: "v", tenantId: "acme", role: "viewer" });
    const operator = await createToken({ name: "o", tenantId: "acme", role: "operator" });
    const none = await call({});
    expect(none.status).toBe(401);
    expect((await none.json()).error.code).toBe("UNAUTHENTICATED");
    expect((await call({ authorization: "Bearer ob_nope" })).status).toBe(401);
    expect((await call({ authorization: `Bearer ${viewer.secret}` })).status).toBe(403);
    const good = await call({ authorization: `Bearer ${operator.secret}` });
    expect(good.status).toBe(200);
    const body = await good.json();
    expect(body.principal).toMatchObject({ tokenId: operator.token.id, tenantId: "acme", role: "operator" });
    expect(body.params).toEqual({ id: "1" });
  });

  it("sessions: the cookie names a server-side session; a tampered one is refused; revoking the token ends it", async () => {
    const { token, secret } = await createToken({ name: "s", tenantId: "acme", role: "admin" });
    const result = await login({ token: secret, ip: "127.0.0.1" });
    expect(result).not.toBeNull();
    const cookie = `${SESSION_COOKIE}=${result!.cookieValue}`;
    expect((await authenticate(new Headers({ cookie })))?.principal.tokenId).toBe(token.id);
    const tampered = result!.cookieValue.replace(/^./, (c) => (c === "a" ? "b" : "a"));
    expect(await authenticate(new Headers({ cookie: `${SESSION_COOKIE}=${tampered}` }))).toBeNull();
    // CSRF: a state-changing session request from another site, or without Origin/Sec-Fetch-Site, is refused.
    expect((await call({ cookie, "sec-fetch-site": "cross-site" }, "POST")).status).toBe(403);
    expect((await call({ cookie, origin: "http://evil.test" }, "POST")).status).toBe(403);
    expect((await call({ cookie }, "POST")).status).toBe(403);
    expect((await call({ cookie, origin: "http://console.test", "sec-fetch-site": "same-origin" }, "POST")).status).toBe(200);
    await revokeToken(token.id);
    expect(await authenticate(new Headers({ cookie }))).toBeNull();
    const audit = await db.pool.query("SELECT action, result FROM audit_log WHERE token_id = $1", [token.id]);
    expect(audit.rows).toContainEqual({ action: "login", result: "ok" });
  });

  it("rate limit: per token, then 429 with Retry-After", async () => {
    process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "2";
    try {
      const { secret } = await createToken({ name: "r", tenantId: "acme", role: "operator" });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push(await call({ authorization: `Bearer ${secret}` }));
      expect(statuses.map((r) => r.status)).toEqual([200, 200, 429]);
      expect(Number(statuses[2]!.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      delete process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE;
    }
  });

  it("the audit log is append-only: the database refuses UPDATE, DELETE and TRUNCATE", async () => {
    await appendAudit(getPrisma(), { principal: null, action: "test", tenantId: "acme", result: "ok", target: "k" });
    await expect(db.pool.query("UPDATE audit_log SET result = 'forged'")).rejects.toThrow(/append-only/);
    await expect(db.pool.query("DELETE FROM audit_log")).rejects.toThrow(/append-only/);
    await expect(db.pool.query("TRUNCATE audit_log")).rejects.toThrow(/append-only/);
    await expect(getPrisma().auditLog.deleteMany({})).rejects.toThrow();
  });

  it("bootstrap: one platform admin token on an empty database, once, even when two starts race", async () => {
    await db.pool.query("DELETE FROM login_links");
    await db.pool.query("DELETE FROM api_tokens");
    const [a, b] = await Promise.all([
      ensureBootstrapAdmin("http://localhost:3000"),
      ensureBootstrapAdmin("http://localhost:3000"),
    ]);
    const made = [a, b].filter((x) => x !== null);
    expect(made).toHaveLength(1);
    const { rows } = await db.pool.query("SELECT role, tenant_id FROM api_tokens");
    expect(rows).toEqual([{ role: "admin", tenant_id: null }]);
    const code = /#code=(.+)$/.exec(made[0]!.url)![1]!;
    const first = await login({ code, ip: null });
    expect(first?.principal).toMatchObject({ role: "admin", tenantId: null });
    expect(await login({ code, ip: null })).toBeNull();
    expect(await ensureBootstrapAdmin("http://localhost:3000")).toBeNull();
  });

  it("npm start's second sign-in line: the same link while unused, how to get a new one once it has been used", async () => {
    await db.pool.query("DELETE FROM login_links");
    await db.pool.query("DELETE FROM api_tokens");
    const first = await bootstrapLogin(db.url, "http://localhost:3000");
    expect(first.link).not.toBeNull();
    expect(first.message).toContain("Sign in once with this link");
    expect(await bootstrapLoginReminder(db.url, first)).toBe(first.message);
    expect(await login({ code: first.link?.code ?? "", ip: null })).not.toBeNull();
    const reminder = await bootstrapLoginReminder(db.url, first);
    expect(reminder).not.toContain(first.link?.code ?? "?");
    expect(reminder).not.toContain("Sign in once");
    expect(reminder).toContain("was used");
    expect(reminder).toContain(`npm run token -- link ${first.link?.tokenId}`);
    // Past its expiry, unused: said so, not printed again.
    const later = new Date((first.link?.expiresAt.getTime() ?? 0) + 1000);
    await db.pool.query("UPDATE login_links SET used_at = NULL");
    expect(await bootstrapLoginReminder(db.url, first, later)).toContain("has expired");
    // Tokens exist already: no link was made, and the line says how to get in.
    const again = await bootstrapLogin(db.url, "http://localhost:3000");
    expect(again.link).toBeNull();
    expect(await bootstrapLoginReminder(db.url, again)).toBe(again.message);
  });

  it("log values cannot forge lines", () => {
    expect(safeForLog('k\n{"level":"info"}\r\u001b[2J\u2028')).toBe('k\\u000a{"level":"info"}\\u000d\\u001b[2J\\u2028');
  });
});

describe("csrf", () => {
  it("accepts a same-origin form POST whose Origin is null, refuses a null Origin from elsewhere", async () => {
    const { csrfProblem } = await import("./csrf");
    const req = (headers: Record<string, string>) =>
      new Request("http://console.test/api/auth/login", { method: "POST", headers: { host: "console.test", ...headers } });
    expect(csrfProblem(req({ origin: "null", "sec-fetch-site": "same-origin" }), "session")).toBeNull();
    expect(csrfProblem(req({ origin: "null", "sec-fetch-site": "cross-site" }), "session")).not.toBeNull();
    expect(csrfProblem(req({ origin: "null" }), "session")).not.toBeNull();
  });
});
