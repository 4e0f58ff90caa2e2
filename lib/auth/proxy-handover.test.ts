import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxy } from "../../proxy";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { getPool } from "../db/pool";
import { getPrisma } from "../db/prisma";
import type { Authenticated } from "./authenticate";
import { HANDOVER_HEADER, handOver, takeOver } from "./proxy-handover";
import { createToken } from "./tokens";
import { withAuth } from "./with-auth";

const viewer: Authenticated = {
  principal: { tokenId: "00000000-0000-4000-8000-000000000001", actor: "v (…abcdef)", tenantId: "acme", role: "viewer" },
  via: "bearer",
};
const bearer = (secret: string) => new Headers({ authorization: `Bearer ${secret}` });

describe("proxy → withAuth handover", () => {
  it("is taken once, only with the credentials it was made for, only for 10 s", () => {
    const headers = bearer("ob_a");
    const ref = handOver(viewer, headers, 1_000);
    const forwarded = new Headers(headers);
    forwarded.set(HANDOVER_HEADER, ref);
    expect(takeOver(forwarded, 1_001)).toEqual(viewer);
    expect(takeOver(forwarded, 1_002)).toBeNull();

    const other = bearer("ob_b");
    other.set(HANDOVER_HEADER, handOver(viewer, headers, 1_000));
    expect(takeOver(other, 1_001)).toBeNull();

    const late = new Headers(headers);
    late.set(HANDOVER_HEADER, handOver(viewer, headers, 1_000));
    expect(takeOver(late, 11_000)).toBeNull();

    const forged = new Headers(headers);
    forged.set(HANDOVER_HEADER, "made-up");
    expect(takeOver(forged)).toBeNull();
    expect(takeOver(headers)).toBeNull();
  });

  describe("through the proxy", () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
      process.env.DATABASE_URL = db.url;
      process.env.ONCEBOARD_SECRET = "h".repeat(40);
      process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
      // The lookups counted are the handover's alone: with the auth cache on, a replay was answered
      // from the cache whenever its LISTEN connection happened to be up by then (1 lookup, not 2).
      process.env.ONCEBOARD_AUTH_CACHE_MS = "0";
    });
    afterAll(async () => {
      await getPrisma().$disconnect();
      await db.drop();
    });

    /** Counts the token lookups (by hash) that Prisma sends through the console's pool. */
    function countLookups(): () => number {
      const pool = getPool();
      const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
      let n = 0;
      (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const first = args[0] as { text?: string } | string;
        const text = typeof first === "string" ? first : (first?.text ?? "");
        if (/WHERE[^;]*"token_hash"\s*=/.test(text)) n++;
        return original(...args);
      };
      return () => n;
    }

    /** What Next does with the proxy's answer: the request the route handler sees. */
    function forwardedRequest(url: string, proxied: Response, original: Headers): Request {
      const headers = new Headers(original);
      const overridden = proxied.headers.get("x-middleware-override-headers")?.split(",") ?? [];
      for (const name of overridden) {
        const value = proxied.headers.get(`x-middleware-request-${name}`);
        if (value === null) headers.delete(name);
        else headers.set(name, value);
      }
      return new Request(url, { headers });
    }

    const handler = withAuth("viewer", async (_request, { principal }) => Response.json(principal));
    const url = "http://console.test/api/v1/whoami";

    it("one token lookup per API request: withAuth takes the proxy's answer", async () => {
      const { secret, token } = await createToken({ name: "h", tenantId: "acme", role: "viewer" });
      const lookups = countLookups();
      const headers = new Headers({ host: "console.test", authorization: `Bearer ${secret}` });
      const proxied = await proxy(new NextRequest(url, { headers }));
      expect(lookups()).toBe(1);
      const forwarded = forwardedRequest(url, proxied, headers);
      expect(forwarded.headers.get(HANDOVER_HEADER)).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const response = await handler(forwarded, { params: Promise.resolve({}) });
      expect(response.status).toBe(200);
      expect((await response.json()).tokenId).toBe(token.id);
      expect(lookups()).toBe(1);
      // Replayed, the reference is spent: withAuth asks the database again.
      expect((await handler(forwarded, { params: Promise.resolve({}) })).status).toBe(200);
      expect(lookups()).toBe(2);
    });

    it("a reference the client sends is never forwarded, and alone opens nothing", async () => {
      const { secret } = await createToken({ name: "h2", tenantId: "acme", role: "viewer" });
      const stolen = handOver(viewer, bearer(secret));
      const headers = new Headers({ host: "console.test", authorization: "Bearer ob_not-a-token", [HANDOVER_HEADER]: stolen });
      const proxied = await proxy(new NextRequest(url, { headers }));
      expect(proxied.status).toBe(401);

      const signedIn = new Headers({ host: "console.test", authorization: `Bearer ${secret}`, [HANDOVER_HEADER]: "forged" });
      const forwarded = forwardedRequest(url, await proxy(new NextRequest(url, { headers: signedIn })), signedIn);
      expect(forwarded.headers.get(HANDOVER_HEADER)).not.toBe("forged");

      // Straight to the handler (no proxy) with another credential and a live reference: refused.
      const direct = new Request(url, { headers: { authorization: "Bearer ob_not-a-token", [HANDOVER_HEADER]: stolen } });
      expect((await handler(direct, { params: Promise.resolve({}) })).status).toBe(401);
    });
  });
});
