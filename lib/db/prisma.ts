import { PrismaPg } from "@prisma/adapter-pg";
import type pg from "pg";
import { loadConfig } from "../config";
import { PrismaClient } from "./generated/client";
import { getPool } from "./pool";

declare global {
  var __onceboardPrisma: PrismaClient | undefined;
}

/** The one Prisma client per process, sharing the console's pg pool through the pg adapter. */
export function getPrisma(): PrismaClient {
  globalThis.__onceboardPrisma ??= createPrismaClient(getPool());
  return globalThis.__onceboardPrisma;
}

/**
 * A Prisma client on `pool` whose models live in the library's schema (ONCEBOARD_SCHEMA): Prisma
 * names every table with its schema, so the adapter is told which.
 */
export function createPrismaClient(pool: pg.Pool, schema = loadConfig().ONCEBOARD_SCHEMA): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg(pool, { schema }) });
}

export type { PrismaClient };
