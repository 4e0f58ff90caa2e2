import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findClosedPort } from "../db/free-port";
import { createPrismaClient, type PrismaClient } from "../db/prisma";
import { authenticate } from "./authenticate";

/**
 * Token lookups go through Prisma Client on the console's pool: when PostgreSQL cannot be reached,
 * a Bearer request fails with the console's DATABASE_UNAVAILABLE (the API answers 503). A session
 * cookie fails the same way (lib/auth/sessions.test.ts): nobody is let in on a cookie alone.
 */
describe("authenticate while the database is unreachable", () => {
  let pool: pg.Pool;
  let prisma: PrismaClient;
  beforeAll(async () => {
    process.env.ONCEBOARD_SECRET ??= "d".repeat(40);
    pool = new pg.Pool({ connectionString: `postgresql://postgres@127.0.0.1:${await findClosedPort()}/none`, max: 1 });
    pool.on("error", () => {});
    prisma = createPrismaClient(pool, "onceboard");
  });
  afterAll(() => pool.end());

  it("a Bearer token: DATABASE_UNAVAILABLE, not a 401 or a raw pg error", async () => {
    const headers = new Headers({ authorization: `Bearer ob_${"a".repeat(43)}` });
    await expect(authenticate(headers, prisma)).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
  });
});
