import { PrismaPg } from "@prisma/adapter-pg";
import { loadConfig } from "../config";
import { PrismaClient } from "./generated/client";
import { getPool } from "./pool";

declare global {
  var __onceboardPrisma: PrismaClient | undefined;
}

/** The one Prisma client per process, sharing the console's pg pool through the pg adapter. */
export function getPrisma(): PrismaClient {
  globalThis.__onceboardPrisma ??= new PrismaClient({
    adapter: new PrismaPg(getPool(), { schema: loadConfig().ONCEBOARD_SCHEMA }),
  });
  return globalThis.__onceboardPrisma;
}

export type { PrismaClient };
