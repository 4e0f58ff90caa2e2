import { randomUUID } from "node:crypto";
import os from "node:os";
import { ensureTimelinePartitions } from "./maintenance-mysql";
import {
  alreadyApplied,
  type LibraryMigrateResult,
  type LibraryMigration,
  LibraryMigrationError,
  type MigrateOptions,
  migratedByComment,
  versionInComment,
} from "./migration-history";
import { createMysqlPool, isMysqlUrl, type MysqlConnectionLike, type MysqlHandle, type MysqlPoolLike } from "./mysql";
import { LEASES_TABLE, takeLease } from "./mysql-lease";
import { inSchema, schemaNameOf } from "./schema";
import { LIBRARY_VERSION } from "./version";

/**
 * migrate() on MySQL 8 and MariaDB 10.6+: the schema option names a database (MySQL's schema),
 * created when missing, and the library's tables and procedures go there. As on PostgreSQL it is
 * safe at every start: applied migrations are skipped, an edited one is refused, one installer runs
 * at a time (a lease, mysql-lease.ts). MySQL commits around every DDL statement, so a migration is
 * applied statement by statement (each written to be safe to run again) and recorded once all of
 * them succeeded: a run interrupted half-way is finished by the next.
 */

/** The bookkeeping table's DDL (the PostgreSQL store's migrationsTableSql, for MySQL). */
const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS onceboard.migrations (
  version INT NOT NULL,
  name VARCHAR(255) NOT NULL,
  checksum CHAR(64) NOT NULL,
  applied_at DATETIME(3) NOT NULL,
  PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`;

/**
 * The statements of a migration file: each ends with `;` at the end of a line, or with the
 * delimiter a `DELIMITER x` line sets (the mysql client's convention, so a file applies with the
 * client too). Comment-only and blank lines between statements are dropped.
 */
export function splitMysqlStatements(text: string): string[] {
  const statements: string[] = [];
  let delimiter = ";";
  let current: string[] = [];
  for (const line of text.split("\n")) {
    const directive = /^\s*DELIMITER\s+(\S+)\s*$/i.exec(line);
    if (directive) {
      delimiter = directive[1] as string;
      continue;
    }
    if (current.length === 0 && (/^\s*--/.test(line) || line.trim() === "")) continue;
    const trimmed = line.trimEnd();
    if (trimmed.endsWith(delimiter)) {
      current.push(trimmed.slice(0, -delimiter.length));
      const statement = current.join("\n").trim();
      if (statement) statements.push(statement);
      current = [];
    } else current.push(line);
  }
  const rest = current.join("\n").trim();
  if (rest) throw new Error(`a statement does not end with "${delimiter}": ${rest.slice(0, 80)}…`);
  return statements;
}

/** MariaDB calls its NO PAD binary collation utf8mb4_nopad_bin; MySQL 8 calls it utf8mb4_0900_bin. */
export function forServer(sql: string, mariadb: boolean): string {
  return mariadb ? sql : sql.replaceAll("utf8mb4_nopad_bin", "utf8mb4_0900_bin");
}

/** Whether the server is MariaDB (else MySQL), from VERSION(). */
export async function isMariadb(db: MysqlHandle): Promise<boolean> {
  const [rows] = await db.query("SELECT VERSION() AS version");
  return /mariadb/i.test(String((rows as { version: string }[])[0]?.version ?? ""));
}

export async function migrateMysql(
  db: MysqlPoolLike | string,
  migrations: readonly LibraryMigration[],
  options: MigrateOptions,
  /** Refuses a database a newer library migrated (migration-history.ts). */
  assertSchemaKnown: (schema: string, applied: { version: number; name: string }[], comment: string | null) => void,
): Promise<LibraryMigrateResult> {
  const schema = schemaNameOf(options.schema);
  const pool = isMysqlUrl(db) ? await createMysqlPool(db, 2) : db;
  const owned = pool !== db;
  const connection: MysqlConnectionLike & { release(): void } = await pool.getConnection();
  const result: LibraryMigrateResult = { schema, applied: [], alreadyApplied: [] };
  let lease: Awaited<ReturnType<typeof takeLease>> = null;
  try {
    const mariadb = await isMariadb(connection);
    const run = (sql: string, values: unknown[] = []) => connection.query(inSchema(forServer(sql, mariadb), schema), values);
    await run(`CREATE DATABASE IF NOT EXISTS ${schema} DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin`);
    await run(MIGRATIONS_TABLE);
    await run(LEASES_TABLE);
    lease = await takeLease(connection, schema, "migrate", `${os.hostname()}:${process.pid}:${randomUUID()}`, {
      ttlSeconds: 60,
      waitMs: 10 * 60_000,
    });
    if (!lease) throw new Error(`migrate: another installer held the lease of ${schema} for 10 minutes`);
    const [rows] = await run("SELECT version, checksum, name FROM onceboard.migrations");
    const applied = new Map((rows as { version: number; checksum: string; name: string }[]).map((r) => [Number(r.version), r]));
    const [comments] = await connection.query(
      "SELECT TABLE_COMMENT AS comment FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'migrations'",
      [schema],
    );
    const comment = ((comments as { comment: string | null }[])[0]?.comment ?? "") || null;
    assertSchemaKnown(
      schema,
      [...applied.values()].map((r) => ({ version: Number(r.version), name: r.name })),
      comment,
    );
    for (const m of migrations) {
      if (alreadyApplied(m, applied.get(m.version), `database ${schema}`)) {
        result.alreadyApplied.push(m.name);
        continue;
      }
      try {
        for (const statement of splitMysqlStatements(m.sql)) await run(statement);
        await run("INSERT INTO onceboard.migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3))", [
          m.version,
          m.name,
          m.checksum,
        ]);
      } catch (error) {
        throw new LibraryMigrationError(
          `library migration ${m.name} failed in database ${schema}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      result.applied.push(m.name);
      options.onApplied?.(m.name);
    }
    if (result.applied.length > 0 || versionInComment(comment) === undefined) {
      // A literal of this module, quoted as SQL: the version whose migrations the database now has.
      await run(`ALTER TABLE onceboard.migrations COMMENT = '${migratedByComment(LIBRARY_VERSION).replaceAll("'", "''")}'`);
    }
    const ahead = options.partitionsAhead ?? 7;
    if (ahead > 0) {
      const day = 86_400_000;
      const today = Math.floor(Date.now() / day) * day;
      await ensureTimelinePartitions(connection, schema, {
        from: new Date(today - day),
        to: new Date(today + (ahead + 1) * day),
        interval: "day",
        lockTimeoutSeconds: 5,
        attempts: 5,
      });
    }
    return result;
  } finally {
    await lease?.release().catch(() => {});
    connection.release();
    if (owned) await pool.end().catch(() => {});
  }
}
