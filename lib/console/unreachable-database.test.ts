import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { errorResponse } from "../api/errors";
import { authenticate, databaseError } from "../auth/authenticate";
import { createPrismaClient } from "../db/prisma";
import { ConsoleError, translateDatabaseError } from "./errors";

/** Every SQLSTATE that means "the console cannot reach PostgreSQL", with what PostgreSQL says. */
const UNREACHABLE = [
  ["08000", "connection_exception"],
  ["08001", "sqlclient_unable_to_establish_sqlconnection"],
  ["08003", "connection_does_not_exist"],
  ["08006", "connection_failure"],
  ["08P01", "protocol_violation"],
  ["53300", "sorry, too many clients already"],
  ["55000", 'database "x" is not currently accepting connections'],
  ["57P01", "terminating connection due to administrator command"],
  ["57P03", "the database system is starting up"],
] as const;

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: "FATAL" });

/** How Prisma's pg adapter hands a driver error up: the SQLSTATE under meta.driverAdapterError.cause. */
const prismaWrapped = (code: string, message: string) =>
  Object.assign(new Error("Invalid `prisma.apiToken.findFirst()` invocation"), {
    code: "P2010",
    meta: { driverAdapterError: { cause: { kind: "postgres", originalCode: code, originalMessage: message } } },
  });

describe("every class of 'cannot reach PostgreSQL' is a 503 DATABASE_UNAVAILABLE", () => {
  for (const [code, message] of UNREACHABLE) {
    it(`${code} (${message}) from pg`, async () => {
      const translated = translateDatabaseError(pgError(code, message));
      expect(translated).toBeInstanceOf(ConsoleError);
      expect((translated as ConsoleError).code).toBe("DATABASE_UNAVAILABLE");
      const response = errorResponse(translated);
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("DATABASE_UNAVAILABLE");
    });

    it(`${code} wrapped by Prisma's adapter`, () => {
      const translated = databaseError(prismaWrapped(code, message));
      expect(translated).toBeInstanceOf(ConsoleError);
      expect((translated as ConsoleError).code).toBe("DATABASE_UNAVAILABLE");
    });
  }

  it("leaves a query's own failure (an unknown column) a 500", () => {
    const bug = pgError("42703", 'column "nope" does not exist');
    expect(translateDatabaseError(bug)).toBe(bug);
    expect(errorResponse(bug).status).toBe(500);
  });
});

describe("a database with allow_connections = false", () => {
  let db: TestDatabase;
  let admin: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 1 });
    await db.pool.end();
    admin = new pg.Client({ connectionString: inject("adminDatabaseUrl") });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
  });
  afterAll(async () => {
    await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => {});
    await admin.end();
    await db.drop();
  });

  it("refuses with 55000, which the console answers as 503 DATABASE_UNAVAILABLE", async () => {
    const client = new pg.Client({ connectionString: db.url });
    const error = await client.connect().then(
      () => null,
      (e: unknown) => e,
    );
    await client.end().catch(() => {});
    expect((error as { code?: string }).code).toBe("55000");
    const translated = translateDatabaseError(error);
    expect((translated as ConsoleError).code).toBe("DATABASE_UNAVAILABLE");
    expect((translated as ConsoleError).message).toBe("cannot reach PostgreSQL (the database does not accept connections)");
    expect(errorResponse(translated).status).toBe(503);
  });

  it("is a 503 on /api/v1/health, through the console's own pool", async () => {
    // The console's pool is made on first use from DATABASE_URL; this file's process has made none yet.
    process.env.DATABASE_URL = db.url;
    const { GET } = await import("../../app/api/v1/health/route");
    const response = await GET(new Request("http://console.local/api/v1/health"), { params: Promise.resolve({}) });
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      error: { code: "DATABASE_UNAVAILABLE", message: "cannot reach PostgreSQL (the database does not accept connections)" },
    });
  });

  it("is DATABASE_UNAVAILABLE when a token is looked up through Prisma's adapter", async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pool.on("error", () => {});
    const prisma = createPrismaClient(pool, "onceboard");
    try {
      const headers = new Headers({ authorization: `Bearer ob_${"a".repeat(43)}` });
      await expect(authenticate(headers, prisma)).rejects.toMatchObject({ code: "DATABASE_UNAVAILABLE" });
    } finally {
      await prisma.$disconnect().catch(() => {});
      await pool.end().catch(() => {});
    }
  });
});
