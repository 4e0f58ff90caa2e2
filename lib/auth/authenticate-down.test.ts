import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findFreePort } from "../db/free-port";
import { createPrismaClient, type PrismaClient } from "../db/prisma";
import { authenticate } from "./authenticate";
import { encodeSession, SESSION_COOKIE } from "./session";

/**
 * Token lookups go through Prisma Client on the console's pool: when PostgreSQL cannot be reached,
 * a Bearer request fails with the console's DATABASE_UNAVAILABLE (the API answers 503), and a
 * well-signed session still says who signed in (pages show their error states, not the login form).
 */
describe("authenticate while the database is unreachable", () => {
  let pool: pg.Pool;
  let prisma: PrismaClient;
  beforeAll(async () => {
    process.env.ONCEBOARD_SECRET ??= "d".repeat(40);
    pool = new pg.Pool({ connectionString: `postgresql://postgres@127.0.0.1:${await findFreePort()}/none`, max: 1 });
    pool.on("error", () => {});
    prisma = createPrismaClient(pool, "onceboard");
  });
  afterAll(() => pool.end());

  it("a Bearer token: DATABASE_UNAVAILABLE, not a 401 or a raw pg error", async () => {
    const headers = new Headers({ authorization: `Bearer ob_${"a".repeat(43)}` });
    await expect(authenticate(headers, prisma)).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
  });

  it("a signed session: the principal it names; a forged one: nobody", async () => {
    const claims = {
      tokenId: "00000000-0000-4000-8000-00000000000a",
      expiresAt: new Date(Date.now() + 3_600_000),
      role: "operator" as const,
      tenantId: "acme",
      actor: "oncall (…abcdef)",
    };
    const cookie = `${SESSION_COOKIE}=${encodeSession(claims)}`;
    expect(await authenticate(new Headers({ cookie }), prisma)).toEqual({
      principal: { tokenId: claims.tokenId, actor: claims.actor, tenantId: "acme", role: "operator" },
      via: "session",
    });
    const forged = `${SESSION_COOKIE}=${encodeSession(claims, Buffer.from("x".repeat(40)))}`;
    expect(await authenticate(new Headers({ cookie: forged }), prisma)).toBeNull();
  });
});
