import { randomBytes } from "node:crypto";
import { NextRequest } from "next/server";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as loginRoute from "../../app/api/auth/login/route";
import * as logoutRoute from "../../app/api/auth/logout/route";
import * as metricsRoute from "../../app/api/metrics/route";
import * as releaseRoute from "../../app/api/v1/effects/[key]/release/route";
import { proxy } from "../../proxy";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { findFreePort } from "../db/free-port";
import { createPrismaClient, getPrisma } from "../db/prisma";
import { authenticate } from "./authenticate";
import { announcePeerHeader, PEER_HEADER } from "./client-ip";
import { login } from "./login";
import { createRateLimits } from "./rate-limit";
import { findSessionToken, openSession, SESSION_COOKIE } from "./session";
import { createToken, findActiveTokenById } from "./tokens";
import { withAuth } from "./with-auth";

/**
 * Server-side sessions, fail-closed checks and the rate limits, against a real PostgreSQL: route
 * handlers and the proxy are called in-process as Next would call them.
 */
const CONSOLE = "http://console.test";
const LIMITS = {
  ONCEBOARD_RATE_LIMIT_PER_MINUTE: "1000000",
  ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
  ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE: "1000000",
};

let db: TestDatabase;
let closedUrl: string;

beforeAll(async () => {
  db = await createTestDatabase();
  process.env.DATABASE_URL = db.url;
  process.env.ONCEBOARD_SECRET = "s".repeat(40);
  Object.assign(process.env, LIMITS);
  closedUrl = `postgresql://postgres@127.0.0.1:${await findFreePort()}/none`;
  // As scripts/console-server.ts does: from here on the peer header names the TCP peer.
  announcePeerHeader();
});
afterAll(async () => {
  await getPrisma().$disconnect();
  await db.drop();
});

/** Runs `body` with the console's pool pointing at a port nothing listens on, then puts it back. */
async function whileDatabaseUnreachable<T>(body: () => Promise<T>): Promise<T> {
  const saved = {
    pool: globalThis.__onceboardPool,
    prisma: globalThis.__onceboardPrisma,
    limits: globalThis.__onceboardRateLimits,
  };
  const url = process.env.DATABASE_URL;
  process.env.DATABASE_URL = closedUrl;
  globalThis.__onceboardPool = undefined;
  globalThis.__onceboardPrisma = undefined;
  globalThis.__onceboardRateLimits = undefined;
  try {
    return await body();
  } finally {
    const unreachable = globalThis.__onceboardPool as pg.Pool | undefined;
    await unreachable?.end().catch(() => {});
    process.env.DATABASE_URL = url;
    globalThis.__onceboardPool = saved.pool;
    globalThis.__onceboardPrisma = saved.prisma;
    globalThis.__onceboardRateLimits = saved.limits;
  }
}

const probe = withAuth("viewer", async (_request, { principal }) => Response.json({ data: "tenant data", principal }));

function apiRequest(path: string, headers: Record<string, string>, method = "GET"): Request {
  return new Request(new URL(path, CONSOLE), { method, headers: { host: "console.test", ...headers } });
}

async function callProbe(headers: Record<string, string>): Promise<Response> {
  return probe(apiRequest("/api/v1/probe", headers), { params: Promise.resolve({}) });
}

function proxied(path: string, headers: Record<string, string>): Promise<Response> {
  return proxy(new NextRequest(new URL(path, CONSOLE), { headers: { host: "console.test", ...headers } }));
}

async function signIn(tenantId = "acme", role: "viewer" | "operator" = "viewer") {
  const { token, secret } = await createToken({ name: `s-${randomBytes(3).toString("hex")}`, tenantId, role });
  const result = await login({ token: secret, ip: "192.0.2.1" });
  if (!result) throw new Error("sign-in refused");
  return { token, secret, cookie: `${SESSION_COOKIE}=${result.cookieValue}`, cookieValue: result.cookieValue };
}

function logout(cookie: string): Promise<Response> {
  return logoutRoute.POST(apiRequest("/api/auth/logout", { cookie, origin: CONSOLE }, "POST"));
}

describe("server-side sessions", () => {
  it("stores only a hash of the session id, and how and from where it was signed in", async () => {
    const { token, cookieValue } = await signIn();
    const id = cookieValue.split(".")[0]!;
    const { rows } = await db.pool.query(
      "SELECT id_hash, signed_in_with, client_ip, revoked_at FROM console_sessions WHERE token_id = $1",
      [token.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].id_hash).toHaveLength(64);
    expect(rows[0].id_hash).not.toContain(id);
    expect(rows[0]).toMatchObject({ signed_in_with: "token", client_ip: "192.0.2.1", revoked_at: null });
  });

  it("logout revokes the session: the same cookie replayed is refused by the API and the pages", async () => {
    const { cookie, token } = await signIn();
    expect((await callProbe({ cookie })).status).toBe(200);
    expect((await proxied("/keys", { cookie })).status).toBe(200);

    const out = await logout(cookie);
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/login");
    expect(out.headers.get("set-cookie")).toMatch(/onceboard_session=;.*Max-Age=0/);

    const replayed = await callProbe({ cookie });
    expect(replayed.status).toBe(401);
    expect(await replayed.text()).not.toContain("tenant data");
    // A forged X-Forwarded-Host does not steer the redirect (the peer is no trusted proxy); the
    // sign-in page is told the session was revoked, not left to ask as if none had existed.
    const page = await proxied("/keys", { cookie, "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" });
    expect(page.status).toBe(307);
    expect(page.headers.get("location")).toBe(`${CONSOLE}/login?reason=session-revoked&next=%2Fkeys`);
    const { rows } = await db.pool.query("SELECT revoked_at FROM console_sessions WHERE token_id = $1", [token.id]);
    expect(rows[0].revoked_at).not.toBeNull();
    // The token itself is untouched: only that session ended.
    expect(await findActiveTokenById(token.id)).not.toBeNull();
  });

  it("fails closed: a revoked session while the database is unreachable gets no data (API 503, page the outage notice)", async () => {
    const revoked = await signIn();
    await logout(revoked.cookie);
    const live = await signIn();
    for (const { cookie } of [revoked, live]) {
      await whileDatabaseUnreachable(async () => {
        const api = await callProbe({ cookie });
        expect(api.status).toBe(503);
        const text = await api.text();
        expect(JSON.parse(text).error.code).toBe("DATABASE_UNAVAILABLE");
        expect(text).not.toContain("tenant data");

        const viaProxy = await proxied("/api/v1/workers", { cookie });
        expect(viaProxy.status).toBe(503);
        expect((await viaProxy.json()).error.code).toBe("DATABASE_UNAVAILABLE");

        const page = await proxied("/overview?tenant=globex", { cookie });
        expect(page.status).toBe(307);
        expect(page.headers.get("location")).toBe(`${CONSOLE}/login?reason=unavailable&next=%2Foverview%3Ftenant%3Dglobex`);
      });
    }
    // The same, one level down: authenticate() throws, it never returns the principal a cookie names.
    const pool = new pg.Pool({ connectionString: closedUrl, max: 1 });
    pool.on("error", () => {});
    try {
      const down = createPrismaClient(pool, "onceboard");
      await expect(authenticate(new Headers({ cookie: revoked.cookie }), down)).rejects.toMatchObject({
        code: "DATABASE_UNAVAILABLE",
      });
    } finally {
      await pool.end();
    }
  });

  describe("idle timeout and absolute lifetime", () => {
    afterEach(() => {
      delete process.env.ONCEBOARD_SESSION_IDLE_MINUTES;
      delete process.env.ONCEBOARD_SESSION_HOURS;
    });
    const minutes = (n: number) => n * 60_000;

    it("a session unused for the idle timeout ends; each use within it moves it on", async () => {
      process.env.ONCEBOARD_SESSION_IDLE_MINUTES = "30";
      const { token } = await createToken({ name: "idle", tenantId: "acme", role: "viewer" });
      const t0 = new Date(Date.now() - minutes(600));
      const { cookieValue } = await openSession(token, { signedInWith: "token", ip: null }, getPrisma(), t0);
      const at = (m: number) => findSessionToken(cookieValue, getPrisma(), new Date(t0.getTime() + minutes(m)));
      expect((await at(29))?.id).toBe(token.id);
      expect((await at(58))?.id).toBe(token.id);
      expect(await at(58 + 30)).toBeNull();

      const other = await openSession(token, { signedInWith: "token", ip: null }, getPrisma(), t0);
      expect(await findSessionToken(other.cookieValue, getPrisma(), new Date(t0.getTime() + minutes(31)))).toBeNull();
    });

    it("last_seen_at is written at most once a minute", async () => {
      const { token } = await createToken({ name: "seen", tenantId: "acme", role: "viewer" });
      const t0 = new Date(Date.now() - minutes(10));
      const { cookieValue } = await openSession(token, { signedInWith: "token", ip: null }, getPrisma(), t0);
      const seen = async () =>
        (await db.pool.query("SELECT last_seen_at FROM console_sessions WHERE token_id = $1", [token.id])).rows[0]
          .last_seen_at as Date;
      await findSessionToken(cookieValue, getPrisma(), new Date(t0.getTime() + 30_000));
      expect((await seen()).getTime()).toBe(t0.getTime());
      await findSessionToken(cookieValue, getPrisma(), new Date(t0.getTime() + 61_000));
      expect((await seen()).getTime()).toBe(t0.getTime() + 61_000);
    });

    it("however active, a session ends at its absolute lifetime", async () => {
      process.env.ONCEBOARD_SESSION_IDLE_MINUTES = "30";
      process.env.ONCEBOARD_SESSION_HOURS = "2";
      const { token } = await createToken({ name: "abs", tenantId: "acme", role: "viewer" });
      const t0 = new Date(Date.now() - minutes(600));
      const { cookieValue, expiresAt } = await openSession(token, { signedInWith: "token", ip: null }, getPrisma(), t0);
      expect(expiresAt.getTime()).toBe(t0.getTime() + minutes(120));
      for (const m of [20, 40, 60, 80, 100, 119]) {
        expect((await findSessionToken(cookieValue, getPrisma(), new Date(t0.getTime() + minutes(m))))?.id, `${m} min`).toBe(
          token.id,
        );
      }
      expect(await findSessionToken(cookieValue, getPrisma(), new Date(t0.getTime() + minutes(121)))).toBeNull();
    });
  });
});

describe("redirect after sign-in", () => {
  it("the login form sends a refused next= to the Overview, a plain path back to itself", async () => {
    const { secret } = await createToken({ name: "next", tenantId: "acme", role: "viewer" });
    const post = (next: string) =>
      loginRoute.POST(
        new Request(`${CONSOLE}/api/auth/login`, {
          method: "POST",
          headers: { host: "console.test", origin: CONSOLE, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token: secret, next }).toString(),
        }),
      );
    for (const next of ["/%5Cevil.example", "//evil.example", "/\\evil.example", "https://evil.example/"]) {
      const response = await post(next);
      expect(response.status, next).toBe(303);
      expect(response.headers.get("location"), next).toBe("/overview");
    }
    expect((await post("/keys?key=a%20b")).headers.get("location")).toBe("/keys?key=a%20b");
  });
});

describe("rate limits in PostgreSQL", () => {
  afterEach(() => Object.assign(process.env, LIMITS));
  const from = (address: string, headers: Record<string, string> = {}) => ({ [PEER_HEADER]: address, ...headers });

  it("are shared by every console process: two pools count against one limit", async () => {
    const limits = {
      ONCEBOARD_RATE_LIMIT_PER_MINUTE: 4,
      ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: 1000,
      ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE: 5,
    };
    const poolA = new pg.Pool({ connectionString: db.url, max: 2 });
    const poolB = new pg.Pool({ connectionString: db.url, max: 2 });
    try {
      const a = createRateLimits(poolA, "onceboard", limits);
      const b = createRateLimits(poolB, "onceboard", limits);
      const address = "198.51.100.200";
      const signIns = [];
      for (let i = 0; i < 6; i++) signIns.push((await (i % 2 === 0 ? a : b).signInAttempt(address)).allowed);
      expect(signIns).toEqual([true, true, true, true, true, false]);
      const tokenId = "00000000-0000-4000-8000-0000000000aa";
      const requests = [];
      for (let i = 0; i < 5; i++) requests.push((await (i < 2 ? a : b).authenticatedRequest(tokenId, address)).allowed);
      expect(requests).toEqual([true, true, true, true, false]);
    } finally {
      await poolA.end();
      await poolB.end();
    }
  });

  it("unknown Bearer tokens count against the address: spraying 300 gets 429s, and then even a real token does", async () => {
    process.env.ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE = "30";
    const { secret } = await createToken({ name: "real", tenantId: "acme", role: "viewer" });
    const sprayer = "203.0.113.50";
    const statuses: number[] = [];
    for (let batch = 0; batch < 30; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          callProbe(from(sprayer, { authorization: `Bearer ob_${randomBytes(32).toString("base64url")}` })),
        ),
      );
      statuses.push(...answers.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(270);
    const real = await callProbe(from(sprayer, { authorization: `Bearer ${secret}` }));
    expect(real.status).toBe(429);
    expect(Number(real.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another address is not punished for it.
    expect((await callProbe(from("203.0.113.51", { authorization: `Bearer ${secret}` }))).status).toBe(200);
  });

  it("sign-in: 40 wrong tokens from one untrusted peer are limited, whatever X-Forwarded-For says", async () => {
    process.env.ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE = "30";
    const { secret } = await createToken({ name: "target", tenantId: "acme", role: "admin" });
    const attempt = (token: string, i: number) =>
      loginRoute.POST(
        new Request(`${CONSOLE}/api/auth/login`, {
          method: "POST",
          headers: {
            host: "console.test",
            origin: CONSOLE,
            "content-type": "application/json",
            [PEER_HEADER]: "203.0.113.60",
            "x-forwarded-for": `10.9.${i >> 8}.${i & 255}`,
            "x-real-ip": `10.8.${i >> 8}.${i & 255}`,
          },
          body: JSON.stringify({ token }),
        }),
      );
    const statuses = [];
    for (let i = 0; i < 40; i++) statuses.push((await attempt(`ob_${randomBytes(32).toString("base64url")}`, i)).status);
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(30).every((s) => s === 429)).toBe(true);
    expect((await attempt(secret, 41)).status).toBe(429);
    // The forged addresses never reached the audit log.
    const { rows } = await db.pool.query("SELECT DISTINCT ip FROM audit_log WHERE action = 'login' AND ip LIKE '10.%'");
    expect(rows).toEqual([]);
  });

  it("sign-in fails closed when the rate-limit store cannot be read: 503", async () => {
    const response = await whileDatabaseUnreachable(() =>
      loginRoute.POST(
        new Request(`${CONSOLE}/api/auth/login`, {
          method: "POST",
          headers: { host: "console.test", origin: CONSOLE, "content-type": "application/json" },
          body: JSON.stringify({ token: `ob_${"a".repeat(43)}` }),
        }),
      ),
    );
    expect(response.status).toBe(503);
    expect((await response.json()).error.code).toBe("DATABASE_UNAVAILABLE");
  });

  it("/api/metrics is behind the limit, and answers with Cache-Control: no-store", async () => {
    process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "2";
    const { secret } = await createToken({ name: "metrics", tenantId: null, role: "viewer" });
    const get = () =>
      metricsRoute.GET(apiRequest("/api/metrics", from("203.0.113.70", { authorization: `Bearer ${secret}` })), {
        params: Promise.resolve({}),
      });
    const first = await get();
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect((await get()).status).toBe(200);
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(limited.headers.get("cache-control")).toBe("no-store");
  });
});

describe("refused writes", () => {
  it("a viewer's release attempt (403) is in the audit log", async () => {
    const { secret, token } = await createToken({ name: "nosy", tenantId: "acme", role: "viewer" }).then((made) => ({
      secret: made.secret,
      token: made.token,
    }));
    const response = await releaseRoute.POST(
      apiRequest("/api/v1/effects/capture%3Aord-1/release", { authorization: `Bearer ${secret}` }, "POST"),
      { params: Promise.resolve({ key: "capture:ord-1" }) },
    );
    expect(response.status).toBe(403);
    const { rows } = await db.pool.query("SELECT action, target, result, tenant_id FROM audit_log WHERE token_id = $1", [
      token.id,
    ]);
    expect(rows).toEqual([
      { action: "write.refused", target: "POST /api/v1/effects/capture%3Aord-1/release", result: "refused", tenant_id: "acme" },
    ]);
  });
});
