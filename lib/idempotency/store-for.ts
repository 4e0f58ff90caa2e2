import type { EffectsDb, TransactionHandle } from "./db";
import { isMysqlEngine } from "./mysql";
import type { Store } from "./store";
import { createMysqlStore } from "./stores/mysql";
import { createPostgresStore } from "./stores/postgres";

/**
 * The store for a database handle's engine: a mysql2 or mariadb pool or connection gets the MySQL/MariaDB
 * store, anything else (pg, Prisma, Drizzle, Kysely, postgres.js) the PostgreSQL store.
 */
export function storeFor(db: EffectsDb | TransactionHandle): Store {
  return isMysqlEngine(db) ? createMysqlStore() : createPostgresStore();
}
