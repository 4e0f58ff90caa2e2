import type mysql from "mysql2/promise";
import { loadConfig } from "../config";
import { getEffectsMysqlPool, mysqlEffectsTarget } from "../db/effects-pool";
import type { StatementQueryable } from "../db/types";
import { isEffectsDistributed } from "../idempotency/admin";
import { consoleDatabase } from "./database";
import { NotOnThisEffectsStoreError, translateMysqlDatabaseError } from "./errors";

/**
 * The effects store the console reads: the worker library's tables (effects, the delivery timeline,
 * uncaught violations, rollups, retention settings, registrations, maintenance runs). By default
 * they are in the console's own PostgreSQL; EFFECTS_DATABASE_URL=mysql://… puts them on a MySQL 8
 * or MariaDB server while the console's tables (tokens, sessions, audit, settings, reconciliation)
 * stay in PostgreSQL.
 *
 * The one seam of the console's effects reads: each read states its SQL once per engine, over the
 * engine's handle (byEngine), and maps the rows to its contract type once, after it. A read the
 * console does not have on MySQL says so with a 501 naming it (notOnMysql), never a 500.
 */

/** One statement's rows on the MySQL store (`?` placeholders); reachability and timeouts become ConsoleErrors. */
export interface MysqlReader {
  query<R>(sql: string, values?: readonly unknown[]): Promise<R[]>;
}

export interface PostgresEffectsStore {
  readonly engine: "postgres";
  readonly db: StatementQueryable;
}

export interface MysqlEffectsStore {
  readonly engine: "mysql";
  readonly db: MysqlReader;
  /** The pool itself, for the worker library's admin calls (maintain, planMaintenance) on this store. */
  readonly pool: mysql.Pool;
  /** The database holding the library's tables: the library's `schema` on MySQL. */
  readonly database: string;
}

export type EffectsStore = PostgresEffectsStore | MysqlEffectsStore;

/** What a read takes: the store, or (tests, benchmarks) a PostgreSQL handle, which is that engine's store. */
export type EffectsSource = EffectsStore | StatementQueryable;

export function postgresEffectsStore(db: StatementQueryable): PostgresEffectsStore {
  return { engine: "postgres", db };
}

/** A MySQL store over `pool`, its errors worded for the console (translateMysqlDatabaseError). */
export function mysqlEffectsStore(pool: mysql.Pool, database: string): MysqlEffectsStore {
  return {
    engine: "mysql",
    pool,
    database,
    db: {
      async query<R>(sql: string, values: readonly unknown[] = []): Promise<R[]> {
        try {
          const [rows] = await pool.query(sql, values as unknown[]);
          return rows as R[];
        } catch (error) {
          throw translateMysqlDatabaseError(error);
        }
      },
    },
  };
}

/** The console's PostgreSQL, asked for at the first query: a read that never queries it (one on MySQL) needs no DATABASE_URL. */
const consoleDatabaseOnUse: StatementQueryable = {
  query: (statement, values) => consoleDatabase().query(statement, values),
};

/** The configured store: EFFECTS_DATABASE_URL's MySQL server, else the console's PostgreSQL. */
export function effectsStore(): EffectsStore {
  const mysqlPool = getEffectsMysqlPool();
  return mysqlPool ? mysqlEffectsStore(mysqlPool.pool, mysqlPool.database) : postgresEffectsStore(consoleDatabaseOnUse);
}

export function effectsStoreOf(source: EffectsSource): EffectsStore {
  return "engine" in source ? source : postgresEffectsStore(source);
}

/** Which engine's read to run: the read per engine, each given its engine's handle. */
export function byEngine<T>(
  source: EffectsSource,
  reads: { postgres: (db: StatementQueryable) => T; mysql: (db: MysqlReader, store: MysqlEffectsStore) => T },
): T {
  const store = effectsStoreOf(source);
  return store.engine === "mysql" ? reads.mysql(store.db, store) : reads.postgres(store.db);
}

/** The mysql side of a read the console does not have there: throws the 501 naming `feature` and why. */
export function notOnMysql(feature: string, why: string): () => never {
  return () => {
    throw new NotOnThisEffectsStoreError(feature, why);
  };
}

const auditsWithinReadOf = new WeakMap<object, Promise<boolean>>();

/**
 * Whether an audited read of this store may write its audit row in its own last statement (the key
 * lookup and search, lib/features/keys-and-effects): on PostgreSQL, where audit_log is beside the
 * effects, except where Citus distributes them. There a statement that also writes the
 * coordinator's audit_log is no longer routed to the tenant's worker in one piece: a tenant's
 * search's median was 7.6 and 9.5 ms in two runs, against 6.4 and 7.1 ms with the row written
 * after it (bench:citus-console, 20 reads a run, docs/benchmarks.md), so there it is written after
 * the read. Asked once per handle (a failed check is asked again). A store distributed while the
 * console runs keeps the one statement, which Citus runs correctly, only slower, until the console
 * restarts.
 */
export function auditsWithinRead(source: EffectsSource): Promise<boolean> {
  const store = effectsStoreOf(source);
  if (store.engine === "mysql") return Promise.resolve(false);
  let known = auditsWithinReadOf.get(store.db);
  if (!known) {
    known = isEffectsDistributed(store.db, loadConfig().ONCEBOARD_SCHEMA).then((distributed) => !distributed);
    auditsWithinReadOf.set(store.db, known);
    known.catch(() => auditsWithinReadOf.delete(store.db));
  }
  return known;
}

/** Whether the configured effects store is the console's own PostgreSQL (what a feature joining both needs). */
export function effectsInConsoleDatabase(): boolean {
  return mysqlEffectsTarget() === null;
}
