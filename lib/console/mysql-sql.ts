/**
 * What the console's MySQL reads share (lib/console/effects-store.ts): how an instant is printed
 * and how a JSON value comes back. The pool reads DATETIME(3) as UTC Dates and binds Dates as UTC
 * (lib/db/effects-pool.ts), so instants are passed as Dates.
 */

/** An instant column printed as ISO 8601 UTC, as PostgreSQL's json_agg prints a timestamptz (parsed back with new Date). */
export const mysqlIso = (column: string) => `DATE_FORMAT(${column}, '%Y-%m-%dT%H:%i:%s.%fZ')`;

/**
 * A JSON value as MySQL or MariaDB answers it: MySQL 8's JSON type arrives parsed, MariaDB's JSON
 * (LONGTEXT) as text; a TEXT column holding JSON (effects.outcome) as text on both.
 */
export function mysqlJson<T>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/** A BOOLEAN (TINYINT) or a comparison's 0/1 as a boolean; NULL stays null. */
export function mysqlBool(value: unknown): boolean | null {
  return value === null || value === undefined ? null : Number(value) !== 0;
}
