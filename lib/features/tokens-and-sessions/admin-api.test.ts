import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as releaseRoute from "../../../app/api/v1/effects/[key]/release/route";
import * as sessionRevokeRoute from "../../../app/api/v1/sessions/[id]/revoke/route";
import * as sessionsRoute from "../../../app/api/v1/sessions/route";
import * as tokenRevokeRoute from "../../../app/api/v1/tokens/[id]/revoke/route";
import * as tokensRoute from "../../../app/api/v1/tokens/route";
import { createConsoleTestDatabase, type TestDatabase } from "../../../test/database";
import { login } from "../../auth/login";
import { SESSION_COOKIE } from "../../auth/session";
import { createToken } from "../../auth/tokens";
import { getPrisma } from "../../db/prisma";
import type { CreatedTokenResponse, SessionsResponse, TokensResponse } from "./contract";

/**
 * GET/POST /api/v1/tokens, POST /api/v1/tokens/{id}/revoke, GET /api/v1/sessions and POST
 * /api/v1/sessions/{id}/revoke, called in-process as Next calls them, on a real PostgreSQL; and
 * CONSOLE_READ_ONLY refusing every write in withAuth.
 */
const CONSOLE = "http://console.test";
let db: TestDatabase;

beforeAll(async () => {
  db = await createConsoleTestDatabase("s");
});
afterAll(async () => {
  await getPrisma().$disconnect();
  await db.drop();
});

type Role = "viewer" | "operator" | "admin";

async function bearer(tenantId: string | null, role: Role = "admin"): Promise<Record<string, string>> {
  const { secret } = await createToken({
    name: `t-${tenantId ?? "platform"}-${role}-${randomBytes(3).toString("hex")}`,
    tenantId,
    role,
  });
  return { authorization: `Bearer ${secret}` };
}

async function session(tenantId: string | null, role: Role = "viewer") {
  const { token, secret } = await createToken({
    name: `person-${tenantId ?? "platform"}-${randomBytes(3).toString("hex")}`,
    tenantId,
    role,
  });
  const result = await login({ token: secret, ip: "192.0.2.7" });
  if (!result) throw new Error("sign-in refused");
  return { token, cookie: `${SESSION_COOKIE}=${result.cookieValue}`, cookieValue: result.cookieValue };
}

function request(path: string, headers: Record<string, string>, method = "GET", body?: unknown): Request {
  return new Request(new URL(path, CONSOLE), {
    method,
    headers: { host: "console.test", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}
const none = { params: Promise.resolve({}) };
const withId = (id: string) => ({ params: Promise.resolve({ id }) });

async function listTokens(headers: Record<string, string>, query = ""): Promise<TokensResponse> {
  const response = await tokensRoute.GET(request(`/api/v1/tokens${query}`, headers), none);
  expect(response.status).toBe(200);
  return (await response.json()) as TokensResponse;
}

async function auditRows(action: string) {
  return (await db.pool.query("SELECT actor, tenant_id, target, detail FROM audit_log WHERE action = $1 ORDER BY id", [action]))
    .rows;
}

describe("tokens API", () => {
  it("creates a token whose secret is in the create answer only, audited in the same step; it then authenticates", async () => {
    const admin = await bearer("acme");
    const response = await tokensRoute.POST(
      request("/api/v1/tokens", admin, "POST", { name: "billing-worker", role: "operator" }),
      none,
    );
    expect(response.status).toBe(201);
    const created = (await response.json()) as CreatedTokenResponse;
    expect(created.secret).toMatch(/^ob_/);
    expect(created.token).toMatchObject({ name: "billing-worker", role: "operator", tenantId: "acme", state: "active" });

    const listed = await tokensRoute.GET(request("/api/v1/tokens", admin), none);
    const text = await listed.text();
    expect(text).toContain("billing-worker");
    expect(text).not.toContain(created.secret);
    const { rows } = await db.pool.query("SELECT token_hash FROM api_tokens WHERE id = $1", [created.token.id]);
    expect(text).not.toContain(rows[0].token_hash);

    expect((await auditRows("token.create")).find((r) => r.target === created.token.id)).toMatchObject({ tenant_id: "acme" });
    const probe = await tokensRoute.GET(request("/api/v1/tokens", { authorization: `Bearer ${created.secret}` }), none);
    expect(probe.status).toBe(403); // an operator token: authenticated, not an admin
  });

  it("a tenant admin sees only its tenant's tokens, cannot create for another tenant or the platform, and cannot revoke another's", async () => {
    const globexToken = (await createToken({ name: "globex-secret-worker", tenantId: "globex", role: "viewer" })).token;
    const acmeAdmin = await bearer("acme");
    const seen = await listTokens(acmeAdmin, "?tenant=globex");
    expect(seen.tokens.length).toBeGreaterThan(0);
    expect(seen.tokens.every((t) => t.tenantId === "acme")).toBe(true);
    expect(JSON.stringify(seen)).not.toContain("globex");

    for (const tenant of ["globex", null]) {
      const refused = await tokensRoute.POST(
        request("/api/v1/tokens", acmeAdmin, "POST", { name: "x", role: "admin", tenant }),
        none,
      );
      expect(refused.status).toBe(403);
    }
    const revoke = await tokenRevokeRoute.POST(
      request(`/api/v1/tokens/${globexToken.id}/revoke`, acmeAdmin, "POST"),
      withId(globexToken.id),
    );
    expect(revoke.status).toBe(404);
    const { rows } = await db.pool.query("SELECT revoked_at FROM api_tokens WHERE id = $1", [globexToken.id]);
    expect(rows[0].revoked_at).toBeNull();

    const platform = await listTokens(await bearer(null), "?tenant=globex");
    expect(platform.tokens.map((t) => t.id)).toContain(globexToken.id);
    expect(platform.tokens.every((t) => t.tenantId === "globex")).toBe(true);
  });

  it("revokes a token (audited): it stops authenticating, and its console sessions end with it", async () => {
    const admin = await bearer("acme");
    const person = await session("acme", "viewer");
    const before = await sessionsRoute.GET(request("/api/v1/sessions", admin), none);
    expect(((await before.json()) as SessionsResponse).sessions.map((s) => s.tokenId)).toContain(person.token.id);

    const response = await tokenRevokeRoute.POST(
      request(`/api/v1/tokens/${person.token.id}/revoke`, admin, "POST"),
      withId(person.token.id),
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as { token: { state: string } }).token.state).toBe("revoked");
    expect((await auditRows("token.revoke")).map((r) => r.target)).toContain(person.token.id);
    const after = await sessionsRoute.GET(request("/api/v1/sessions", admin), none);
    expect(((await after.json()) as SessionsResponse).sessions.map((s) => s.tokenId)).not.toContain(person.token.id);
    expect((await tokensRoute.GET(request("/api/v1/tokens", { cookie: person.cookie }), none)).status).toBe(401);
  });

  it("answers 400 naming the field for a bad body or id, and 403 to a viewer", async () => {
    const admin = await bearer("acme");
    const bad = await tokensRoute.POST(request("/api/v1/tokens", admin, "POST", { name: "", role: "root" }), none);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/name.*role|role.*name/s);
    const past = await tokensRoute.POST(
      request("/api/v1/tokens", admin, "POST", { name: "old", role: "viewer", expiresAt: "2020-01-01T00:00:00Z" }),
      none,
    );
    expect(past.status).toBe(400);
    expect(await past.text()).toContain("expiresAt");
    const badId = await tokenRevokeRoute.POST(request("/api/v1/tokens/nope/revoke", admin, "POST"), withId("nope"));
    expect(badId.status).toBe(400);
    expect(await badId.text()).toContain("id must be a UUID");
    const viewer = await bearer("acme", "viewer");
    expect((await tokensRoute.GET(request("/api/v1/tokens", viewer), none)).status).toBe(403);
  });
});

describe("a token minting tokens", () => {
  async function mint(headers: Record<string, string>, body: Record<string, unknown>) {
    const response = await tokensRoute.POST(request("/api/v1/tokens", headers, "POST", body), none);
    return { status: response.status, text: await response.text() };
  }
  const authenticates = async (secret: string) =>
    (await tokensRoute.GET(request("/api/v1/tokens", { authorization: `Bearer ${secret}` }), none)).status;

  it("never outlives its minter: no expiry takes the minter's, a later one or none at all is refused naming expiresAt", async () => {
    const tenMinutes = new Date(Date.now() + 10 * 60_000);
    const { secret } = await createToken({ name: "short-lived", tenantId: null, role: "admin", expiresAt: tenMinutes });
    const minter = { authorization: `Bearer ${secret}` };
    for (const expiresAt of [null, new Date(Date.now() + 86_400_000).toISOString()]) {
      const refused = await mint(minter, { name: "forever", role: "admin", expiresAt });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain("expiresAt");
      expect(refused.text).toContain(tenMinutes.toISOString());
    }
    const inherited = await mint(minter, { name: "inherits", role: "admin" });
    expect(inherited.status).toBe(201);
    expect((JSON.parse(inherited.text) as CreatedTokenResponse).token.expiresAt).toBe(tenMinutes.toISOString());
    const sooner = new Date(Date.now() + 60_000).toISOString();
    const shorter = await mint(minter, { name: "sooner", role: "viewer", expiresAt: sooner });
    expect(shorter.status).toBe(201);
    expect((JSON.parse(shorter.text) as CreatedTokenResponse).token.expiresAt).toBe(sooner);
  });

  it("revoking a token revokes what it minted, transitively, and their sessions; the audit row names them", async () => {
    const { token: root, secret } = await createToken({ name: "root", tenantId: "acme", role: "admin" });
    const child = JSON.parse(
      (await mint({ authorization: `Bearer ${secret}` }, { name: "child", role: "admin" })).text,
    ) as CreatedTokenResponse;
    const grandchild = JSON.parse(
      (await mint({ authorization: `Bearer ${child.secret}` }, { name: "grandchild", role: "operator" })).text,
    ) as CreatedTokenResponse;
    // A session's token is its minter: what the session mints goes with that token.
    const signedIn = await login({ token: child.secret, ip: "192.0.2.9" });
    if (!signedIn) throw new Error("sign-in refused");
    const viaSession = JSON.parse(
      (
        await mint(
          { cookie: `${SESSION_COOKIE}=${signedIn.cookieValue}`, origin: CONSOLE },
          { name: "via-session", role: "viewer" },
        )
      ).text,
    ) as CreatedTokenResponse;
    expect(viaSession.token?.id).toBeDefined();
    const { rows } = await db.pool.query("SELECT minted_by FROM api_tokens WHERE id = $1", [viaSession.token.id]);
    expect(rows[0].minted_by).toBe(child.token.id);
    // Admin 200, operator and viewer 403: authenticated, all of them.
    for (const s of [child.secret, grandchild.secret, viaSession.secret]) expect(await authenticates(s)).not.toBe(401);

    const revoked = await tokenRevokeRoute.POST(
      request(`/api/v1/tokens/${root.id}/revoke`, await bearer("acme"), "POST"),
      withId(root.id),
    );
    expect(revoked.status).toBe(200);
    for (const s of [secret, child.secret, grandchild.secret, viaSession.secret]) expect(await authenticates(s)).toBe(401);
    expect(
      (await tokensRoute.GET(request("/api/v1/tokens", { cookie: `${SESSION_COOKIE}=${signedIn.cookieValue}` }), none)).status,
    ).toBe(401);
    const audit = (await auditRows("token.revoke")).find((r) => r.target === root.id);
    expect([...(audit?.detail.alsoRevoked ?? [])].sort()).toEqual(
      [child.token.id, grandchild.token.id, viaSession.token.id].sort(),
    );
  });

  it("never outranks its minter, and a mint racing its minter's revocation either fails or is revoked with it", async () => {
    const operatorSession = await session("acme", "operator");
    const refused = await mint({ cookie: operatorSession.cookie, origin: CONSOLE }, { name: "up", role: "admin" });
    expect(refused.status).toBe(403);
    for (let round = 0; round < 10; round++) {
      const { token: minter, secret } = await createToken({ name: `racer-${round}`, tenantId: "acme", role: "admin" });
      const admin = await bearer("acme");
      const [minted] = await Promise.all([
        mint({ authorization: `Bearer ${secret}` }, { name: `racing-${round}`, role: "viewer" }),
        tokenRevokeRoute.POST(request(`/api/v1/tokens/${minter.id}/revoke`, admin, "POST"), withId(minter.id)),
      ]);
      if (minted.status === 201) {
        const { rows } = await db.pool.query("SELECT revoked_at FROM api_tokens WHERE id = $1", [
          (JSON.parse(minted.text) as CreatedTokenResponse).token.id,
        ]);
        expect(rows[0].revoked_at).not.toBeNull();
      } else expect(minted.status).toBe(401);
    }
  });
});

describe("sessions API", () => {
  it("lists live sessions by a public id that is neither the cookie nor its hash, with who, how and from where", async () => {
    const admin = await bearer("acme");
    const person = await session("acme");
    const listed = await sessionsRoute.GET(request("/api/v1/sessions", admin), none);
    const text = await listed.text();
    const mine = ((JSON.parse(text) as SessionsResponse).sessions ?? []).find((s) => s.tokenId === person.token.id);
    expect(mine).toMatchObject({ signedInWith: "token", clientIp: "192.0.2.7", tenantId: "acme", role: "viewer" });
    const { rows } = await db.pool.query("SELECT id_hash, public_id FROM console_sessions WHERE token_id = $1", [
      person.token.id,
    ]);
    expect(mine?.id).toBe(rows[0].public_id);
    expect(text).not.toContain(rows[0].id_hash);
    expect(text).not.toContain(person.cookieValue.split(".")[0]);
  });

  it("a revoked session is refused on its next request; the revocation is audited; another tenant's admin cannot see or revoke it", async () => {
    const person = await session("acme", "admin");
    expect((await tokensRoute.GET(request("/api/v1/tokens", { cookie: person.cookie }), none)).status).toBe(200);
    const { rows } = await db.pool.query("SELECT public_id FROM console_sessions WHERE token_id = $1", [person.token.id]);
    const id = rows[0].public_id as string;

    const globexAdmin = await bearer("globex");
    const globexView = (await (
      await sessionsRoute.GET(request("/api/v1/sessions", globexAdmin), none)
    ).json()) as SessionsResponse;
    expect(globexView.sessions.map((s) => s.id)).not.toContain(id);
    const foreign = await sessionRevokeRoute.POST(request(`/api/v1/sessions/${id}/revoke`, globexAdmin, "POST"), withId(id));
    expect(foreign.status).toBe(404);
    expect((await tokensRoute.GET(request("/api/v1/tokens", { cookie: person.cookie }), none)).status).toBe(200);

    const revoked = await sessionRevokeRoute.POST(
      request(`/api/v1/sessions/${id}/revoke`, await bearer("acme"), "POST"),
      withId(id),
    );
    expect(revoked.status).toBe(200);
    expect((await tokensRoute.GET(request("/api/v1/tokens", { cookie: person.cookie }), none)).status).toBe(401);
    expect((await auditRows("session.revoke")).map((r) => r.target)).toContain(id);
    const again = await sessionRevokeRoute.POST(
      request(`/api/v1/sessions/${id}/revoke`, await bearer("acme"), "POST"),
      withId(id),
    );
    expect(again.status).toBe(404);
  });
});

describe("CONSOLE_READ_ONLY", () => {
  it("refuses every state-changing request with 403 and says why, audited; reads still answer", async () => {
    const admin = await bearer(null);
    process.env.CONSOLE_READ_ONLY = "true";
    try {
      const create = await tokensRoute.POST(request("/api/v1/tokens", admin, "POST", { name: "nope", role: "viewer" }), none);
      expect(create.status).toBe(403);
      expect(await create.text()).toContain("read-only (CONSOLE_READ_ONLY=true)");
      const release = await releaseRoute.POST(request("/api/v1/effects/k/release?tenant=acme", admin, "POST"), {
        params: Promise.resolve({ key: "k" }),
      });
      expect(release.status).toBe(403);
      expect((await tokensRoute.GET(request("/api/v1/tokens", admin), none)).status).toBe(200);
      const { rows } = await db.pool.query("SELECT 1 FROM api_tokens WHERE name = 'nope'");
      expect(rows).toHaveLength(0);
      const refused = await db.pool.query(
        "SELECT target FROM audit_log WHERE action = 'write.refused' AND detail->>'reason' LIKE '%read-only%'",
      );
      expect(refused.rows.map((r) => r.target)).toContain("POST /api/v1/tokens");
    } finally {
      delete process.env.CONSOLE_READ_ONLY;
    }
    const allowed = await tokensRoute.POST(request("/api/v1/tokens", admin, "POST", { name: "yes", role: "viewer" }), none);
    expect(allowed.status).toBe(201);
  });
});
