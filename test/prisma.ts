import type pg from "pg";
import { createPrismaClient, type PrismaClient } from "../lib/db/prisma";

/**
 * A real Prisma client (the repository's generated one, through @prisma/adapter-pg) for tests that
 * prove the worker library works with Prisma users' handles. The library itself knows Prisma only
 * structurally (PrismaLike); its tests reach the generated client through this harness, not
 * through the console's folders.
 */
export function testPrismaClient(pool: pg.Pool): PrismaClient {
  return createPrismaClient(pool);
}
