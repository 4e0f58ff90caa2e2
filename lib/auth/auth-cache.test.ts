import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as logoutRoute from "../../app/api/auth/logout/route";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { getPool } from "../db/pool";
import { getPrisma } from "../db/prisma";
import { AUTH_CHANGED_CHANNEL, AuthCache, consoleAuthCache } from "./auth-cache";
import { authenticate } from "./authenticate";
import { announcePeerHeader, PEER_HEADER } from "./client-ip";
import { guardRequest } from "./guard";
import { login } from "./login";
import { createRateLimits, type RateLimits } from "./rate-limit";
import { SESSION_COOKIE } from "./session";
import { createToken, revokeToken } from "./tokens";

/**
 * The in-process cache of who a credential is (lib/auth/auth-cache.ts), against a real PostgreSQL:
 * a revocation made by another process (plain SQL on another connection) is seen through the
 * notification, long before ONCEBOARD_AUTH_CACHE_MS; one made by this process at once; nothing is
 * answered from memory while the notification connection is down.
 */
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  process.env.DATABASE_URL = db.url;
  process.env.ONCEBOARD_SECRET = "c".repeat(40);
  // Far beyond the waits below: an answer that changes within them was changed by a notification.
  process.env.ONCEBOARD_AUTH_CACHE_MS = "60000";
  announcePeerHeader();
});
afterAll(async () => {
  globalThis.__onceboardAuthCache?.cache.stop();
  delete process.env.ONCEBOARD_AUTH_CACHE_MS;
  await getPrisma().$disconnect();
  await getPool().end();
  await db.drop();
});
afterEach(async () => {
  await db.pool.query("ALTER TABLE api_tokens ENABLE TRIGGER api_tokens_auth_changed");
  await db.pool.query("ALTER TABLE console_sessions ENABLE TRIGGER console_sessions_auth_changed");
});

const bearer = (secret: string) => new Headers({ authorization: `Bearer ${secret}` });

async function listening(): Promise<void> {
  consoleAuthCache();
  for (let i = 0; i < 200 && !globalThis.__onceboardAuthCache?.cache.active; i++) await sleep(25);
  expect(globalThis.__onceboardAuthCache?.cache.active).toBe(true);
}

/** Polls `check` until it holds or `ms` pass; answers whether it held. */
async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  do {
    if (await check()) return true;
    await sleep(20);
  } while (Date.now() < deadline);
  return false;
}

/** A token authenticated once, so that its answer is in the cache. */
async function cachedToken() {
  const { token, secret } = await createToken({ name: `c-${randomBytes(3).toString("hex")}`, tenantId: "acme", role: "viewer" });
  await authenticate(bearer(secret));
  await listening();
  expect((await authenticate(bearer(secret)))?.principal.tokenId).toBe(token.id);
  return { token, secret };
}

describe("the authentication cache", () => {
  it("answers from memory: a revocation that notifies nobody is not seen, until a notification comes", async () => {
    const { token, secret } = await cachedToken();
    // Another process's revocation with the notification switched off: only the cache can still say yes.
    await db.pool.query("ALTER TABLE api_tokens DISABLE TRIGGER api_tokens_auth_changed");
    await db.pool.query("UPDATE api_tokens SET revoked_at = now() WHERE id = $1", [token.id]);
    expect((await authenticate(bearer(secret)))?.principal.tokenId).toBe(token.id);
    await db.pool.query(`NOTIFY ${AUTH_CHANGED_CHANNEL}`);
    expect(await within(5000, async () => (await authenticate(bearer(secret))) === null)).toBe(true);
  });

  it("a token revoked by another process is refused once its commit notifies, not after the cache's lifetime", async () => {
    const { token, secret } = await cachedToken();
    await db.pool.query("UPDATE api_tokens SET revoked_at = now() WHERE id = $1", [token.id]);
    expect(await within(5000, async () => (await authenticate(bearer(secret))) === null)).toBe(true);
  });

  it("a token revoked by this process is refused on its very next request", async () => {
    const { token, secret } = await cachedToken();
    expect(await revokeToken(token.id)).toBe(true);
    expect(await authenticate(bearer(secret))).toBeNull();
  });

  it("logout: the next request with the session's cookie is refused, and another process's logout is seen too", async () => {
    const { secret } = await createToken({ name: "sess", tenantId: "acme", role: "viewer" });
    const signIn = async () => {
      const result = await login({ token: secret, ip: "192.0.2.9" });
      if (!result) throw new Error("sign-in refused");
      return new Headers({ cookie: `${SESSION_COOKIE}=${result.cookieValue}` });
    };
    const here = await signIn();
    await authenticate(here);
    await listening();
    expect(await authenticate(here)).not.toBeNull();
    const out = await logoutRoute.POST(
      new Request("http://console.test/api/auth/logout", {
        method: "POST",
        headers: { host: "console.test", origin: "http://console.test", cookie: here.get("cookie") ?? "" },
      }),
    );
    expect(out.status).toBe(303);
    expect(await authenticate(here)).toBeNull();

    const there = await signIn();
    expect(await authenticate(there)).not.toBeNull();
    expect(await authenticate(there)).not.toBeNull();
    await db.pool.query("UPDATE console_sessions SET revoked_at = now() WHERE revoked_at IS NULL AND client_ip = '192.0.2.9'");
    expect(await within(5000, async () => (await authenticate(there)) === null)).toBe(true);
  });

  it("while its notification connection is down nothing is answered from memory", async () => {
    const { token, secret } = await cachedToken();
    await db.pool.query("ALTER TABLE api_tokens DISABLE TRIGGER api_tokens_auth_changed");
    await db.pool.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'onceboard-console-auth' AND datname = current_database()",
    );
    await db.pool.query("UPDATE api_tokens SET revoked_at = now() WHERE id = $1", [token.id]);
    expect(await within(5000, async () => (await authenticate(bearer(secret))) === null)).toBe(true);
    // It comes back by itself, empty.
    await listening();
    expect(await authenticate(bearer(secret))).toBeNull();
  });
});

describe("the cache and the unknown-token limit of an address", () => {
  const LIMITS = {
    ONCEBOARD_RATE_LIMIT_PER_MINUTE: 1000,
    ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: 1000,
    ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE: 3,
    ONCEBOARD_RATE_LIMIT_SHARE: 64,
  };
  const from = (address: string, secret: string) => new Headers({ [PEER_HEADER]: address, authorization: `Bearer ${secret}` });
  const spray = async (limits: RateLimits, address: string) => {
    for (let i = 0; i < 4; i++) await guardRequest(from(address, `ob_${randomBytes(32).toString("base64url")}`), { limits });
  };

  it("a token known from one address is checked afresh from another: a blocked address gets 429 even with it", async () => {
    const limits = createRateLimits(getPool(), "onceboard", LIMITS);
    const { secret } = await createToken({ name: "known", tenantId: "acme", role: "viewer" });
    await listening();
    for (let i = 0; i < 2; i++)
      expect((await guardRequest(from("198.51.100.21", secret), { limits })).kind).toBe("authenticated");
    await spray(limits, "198.51.100.22");
    expect((await guardRequest(from("198.51.100.22", secret), { limits })).kind).toBe("rate-limited");
    expect((await guardRequest(from("198.51.100.21", secret), { limits })).kind).toBe("authenticated");
  });

  it("when an address is blocked, its known tokens are refused too, whichever process counted the block", async () => {
    const here = createRateLimits(getPool(), "onceboard", LIMITS);
    const { secret } = await createToken({ name: "known2", tenantId: "acme", role: "viewer" });
    await listening();
    for (let i = 0; i < 2; i++)
      expect((await guardRequest(from("198.51.100.31", secret), { limits: here })).kind).toBe("authenticated");
    await spray(here, "198.51.100.31");
    expect((await guardRequest(from("198.51.100.31", secret), { limits: here })).kind).toBe("rate-limited");

    for (let i = 0; i < 2; i++)
      expect((await guardRequest(from("198.51.100.32", secret), { limits: here })).kind).toBe("authenticated");
    // Another console process (its own pool) sees the unknown tokens; this one learns of the block.
    const otherPool = new pg.Pool({ connectionString: db.url, max: 1, options: "-c search_path=onceboard,public" });
    try {
      await spray(createRateLimits(otherPool, "onceboard", LIMITS), "198.51.100.32");
    } finally {
      await otherPool.end();
    }
    expect(
      await within(
        5000,
        async () => (await guardRequest(from("198.51.100.32", secret), { limits: here })).kind === "rate-limited",
      ),
    ).toBe(true);
  });
});

describe("AuthCache", () => {
  let connections: pg.Client[] = [];
  const connect = () => {
    const client = new pg.Client({ connectionString: db.url });
    connections.push(client);
    return client;
  };
  afterEach(() => {
    connections = [];
  });

  async function started(ttlMs: number): Promise<AuthCache<string>> {
    const cache = new AuthCache<string>(connect, ttlMs);
    expect(await within(5000, async () => cache.active)).toBe(true);
    return cache;
  }

  it("keeps an answer for its lifetime, never past the credential's own end", async () => {
    const cache = await started(1000);
    try {
      cache.set("a", "alice", cache.generation(), Number.POSITIVE_INFINITY, 10_000);
      expect(cache.get("a", 10_999)).toBe("alice");
      expect(cache.get("a", 11_000)).toBeUndefined();
      cache.set("b", "bob", cache.generation(), 10_500, 10_000);
      expect(cache.get("b", 10_499)).toBe("bob");
      expect(cache.get("b", 10_500)).toBeUndefined();
    } finally {
      cache.stop();
    }
  });

  it("does not store what was read before a change it was told of", async () => {
    const cache = await started(60_000);
    try {
      const before = cache.generation();
      await db.pool.query(`NOTIFY ${AUTH_CHANGED_CHANNEL}`);
      expect(await within(5000, async () => cache.generation() !== before)).toBe(true);
      cache.set("a", "stale", before, Number.POSITIVE_INFINITY);
      expect(cache.get("a")).toBeUndefined();
      cache.set("a", "fresh", cache.generation(), Number.POSITIVE_INFINITY);
      expect(cache.get("a")).toBe("fresh");
    } finally {
      cache.stop();
    }
  });

  it("keeps and answers nothing before LISTEN, nor after stop()", async () => {
    const cache = new AuthCache<string>(connect, 60_000);
    cache.set("a", "early", cache.generation(), Number.POSITIVE_INFINITY);
    expect(cache.get("a")).toBeUndefined();
    expect(await within(5000, async () => cache.active)).toBe(true);
    expect(cache.get("a")).toBeUndefined();
    cache.set("a", "kept", cache.generation(), Number.POSITIVE_INFINITY);
    expect(cache.get("a")).toBe("kept");
    cache.stop();
    expect(cache.get("a")).toBeUndefined();
  });
});
