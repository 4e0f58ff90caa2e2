import type pg from "pg";

/**
 * The two database handles the library accepts, and a small common interface over them.
 * A pg Pool (or, inside a transaction, a PoolClient/Client), or a PrismaClient (or, inside a
 * transaction, the interactive-transaction client Prisma passes to $transaction's callback).
 * Typed structurally so the library does not depend on the app's generated Prisma client.
 */
export interface PrismaLike {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}
export interface PrismaClientLike extends PrismaLike {
  $transaction<R>(fn: (tx: PrismaLike) => Promise<R>, options?: { isolationLevel?: string; timeout?: number }): Promise<R>;
}
export type PgQueryable = Pick<pg.PoolClient, "query">;
export type EffectsDb = pg.Pool | PrismaClientLike;
/** What a caller passes as the transaction a transactional claim joins. */
export type TransactionHandle = PgQueryable | PrismaLike;

export interface Statement {
  /** A prepared statement's name: pg parses and plans it once per connection. */
  name: string;
  text: string;
  /** Whether the statement returns rows (SELECT / RETURNING) or only a count. */
  returns: "rows" | "count";
}

export interface SqlResult<R> {
  rows: R[];
  rowCount: number;
}

export interface Sql {
  run<R = Record<string, unknown>>(statement: Statement, values: unknown[]): Promise<SqlResult<R>>;
  /** True when statements run inside a transaction the library does not own: no statement retries. */
  readonly inTransaction: boolean;
}

export function isPrisma(db: unknown): db is PrismaLike {
  return typeof (db as PrismaLike | undefined)?.$queryRawUnsafe === "function";
}

export function isPgPool(db: unknown): db is pg.Pool {
  const d = db as pg.Pool | undefined;
  return typeof d?.connect === "function" && typeof d?.query === "function" && typeof d?.totalCount === "number";
}

export function sqlFor(handle: EffectsDb | TransactionHandle, inTransaction: boolean): Sql {
  if (isPrisma(handle)) {
    return {
      inTransaction,
      async run<R>(statement: Statement, values: unknown[]) {
        if (statement.returns === "rows") {
          const rows = await handle.$queryRawUnsafe<R[]>(statement.text, ...values);
          return { rows, rowCount: rows.length };
        }
        const rowCount = await handle.$executeRawUnsafe(statement.text, ...values);
        return { rows: [], rowCount };
      },
    };
  }
  const q = handle as PgQueryable;
  return {
    inTransaction,
    async run<R>(statement: Statement, values: unknown[]) {
      const result = await q.query({ name: statement.name, text: statement.text, values });
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
  };
}

/**
 * Runs `fn` in a new READ COMMITTED transaction on `db`, handing it the transaction as an Sql
 * (for the library's statements) and as the native handle (for the caller's writes).
 */
export async function inNewTransaction<T>(
  db: EffectsDb,
  fn: (sql: Sql, tx: TransactionHandle) => Promise<T>,
  options: { timeoutMs?: number } = {},
): Promise<T> {
  if (isPrisma(db)) {
    return (db as PrismaClientLike).$transaction((tx) => fn(sqlFor(tx, true), tx), {
      isolationLevel: "ReadCommitted",
      timeout: options.timeoutMs,
    });
  }
  const client = await (db as pg.Pool).connect();
  let broken = false;
  // The pool stops listening to a client's errors while it is checked out; without a listener a
  // connection cut between two of the step's queries (a server restart, pg_terminate_backend)
  // is an unhandled 'error' event that kills the worker. Mark it broken and let the query fail.
  const onConnectionError = () => {
    broken = true;
  };
  client.on("error", onConnectionError);
  try {
    await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
    try {
      const value = await fn(sqlFor(client, true), client);
      await client.query("COMMIT");
      return value;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw error;
    }
  } finally {
    client.off("error", onConnectionError);
    client.release(broken ? true : undefined);
  }
}
