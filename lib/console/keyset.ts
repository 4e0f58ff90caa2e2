/**
 * Keyset pages, one definition for every list of the console (runs, findings, violations, keys,
 * audit, tokens, sessions, bulk items): a list declares its sort key once — columns of a unique,
 * typed key, time first and a numeric id last — and takes from here its ORDER BY, its "after the
 * cursor" condition, the columns a cursor is made of, and the cursor's encoding and validation.
 *
 * Why one definition: the lists that repeated and skipped rows ordered by one thing and bounded
 * pages by another. `SELECT id::text AS id … ORDER BY id` sorts by the text alias (9 before 23),
 * while `WHERE (t, id) < ($1, $2::bigint)` compares the bigint column, so a page's bound cut the
 * text order anywhere. Here both clauses are written from the same qualified columns and types.
 */

/** A cursor part's type: how it is printed into the cursor, validated back and cast in SQL. */
type KeysetType = "timestamptz" | "bigint" | "text";

interface KeysetColumn {
  /** The column, qualified by the list's table or alias (never a bare name an output alias could shadow). */
  column: string;
  type: KeysetType;
}

class InvalidCursorError extends Error {
  readonly code = "INVALID_INPUT";
  constructor() {
    super("invalid query: cursor is not one this API returned");
  }
}

const MAX_BIGINT = 9_223_372_036_854_775_807n;
// Exactly what cursorColumns prints for a time: anything else (Date.parse takes "1") could fail the cast.
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: text parts never hold one, and NUL cannot be bound
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /\p{Cs}/u;

function validPart(type: KeysetType, value: unknown): value is string {
  if (typeof value !== "string") return false;
  switch (type) {
    case "timestamptz":
      return (
        CURSOR_TIME.test(value) &&
        !Number.isNaN(Date.parse(value)) &&
        // 2026-02-31 parses (it rolls over): the printed time must be the time it names.
        new Date(value).toISOString().slice(0, 19) === value.slice(0, 19)
      );
    case "bigint":
      return /^-?[1-9]\d{0,18}$|^0$/.test(value) && BigInt(value) <= MAX_BIGINT && BigInt(value) >= -MAX_BIGINT;
    case "text":
      return value.length <= 1024 && !CONTROL_CHARACTER.test(value) && !LONE_SURROGATE.test(value);
  }
}

/** "v.occurred_at" as MySQL names it: `v`.`occurred_at`. */
export function quoteMysql(column: string): string {
  return column
    .split(".")
    .map((part) => `\`${part}\``)
    .join(".");
}

/**
 * A list's sort key. `direction` is the whole key's: "desc" lists newest first, "asc" in the order
 * rows were made (bulk items run in). `name` is written into each cursor, so one list's cursor is
 * refused by another.
 */
export class Keyset {
  constructor(
    readonly name: string,
    readonly columns: readonly KeysetColumn[],
    readonly direction: "asc" | "desc" = "desc",
  ) {}

  /** The ORDER BY list. */
  get orderBy(): string {
    const dir = this.direction === "desc" ? "DESC" : "ASC";
    return this.columns.map((c) => `${c.column} ${dir}`).join(", ");
  }

  /** The cursor's parts as output columns keyset_0, keyset_1 … (times to the microsecond, as stored). */
  get cursorColumns(): string {
    return this.columns
      .map((c, i) =>
        c.type === "timestamptz"
          ? `to_char(${c.column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS keyset_${i}`
          : `${c.column}::text AS keyset_${i}`,
      )
      .join(", ");
  }

  /**
   * The rows after the cursor bound to $first, $first+1 …; every row when $first is NULL (the
   * first page). One row comparison, so an index on the key's columns serves it.
   */
  after(first: number): string {
    const params = this.columns.map((c, i) => `$${first + i}::${c.type}`);
    const op = this.direction === "desc" ? "<" : ">";
    return `($${first}::${this.columns[0]?.type} IS NULL OR (${this.columns.map((c) => c.column).join(", ")}) ${op} (${params.join(", ")}))`;
  }

  /** The values for after()'s parameters: the decoded cursor, or NULLs on the first page. */
  values(cursor: string | undefined | null): (string | null)[] {
    return cursor ? this.decode(cursor) : this.columns.map(() => null);
  }

  /** MySQL's ORDER BY list (the same order: identifiers quoted, `key` is a reserved word there). */
  get mysqlOrderBy(): string {
    const dir = this.direction === "desc" ? "DESC" : "ASC";
    return this.columns.map((c) => `${quoteMysql(c.column)} ${dir}`).join(", ");
  }

  /** MySQL's keyset_i columns, printed exactly as cursorColumns prints them (DATETIME(3): the last three digits are 0). */
  get mysqlCursorColumns(): string {
    return this.columns
      .map((c, i) =>
        c.type === "timestamptz"
          ? `DATE_FORMAT(${quoteMysql(c.column)}, '%Y-%m-%dT%H:%i:%s.%fZ') AS keyset_${i}`
          : `CAST(${quoteMysql(c.column)} AS CHAR) AS keyset_${i}`,
      )
      .join(", ");
  }

  /**
   * MySQL's "after the cursor" condition and its values (`?` placeholders, in order): every row on
   * the first page. A time part is bound as UTC 'YYYY-MM-DD hh:mm:ss.ffffff' (the pool's session
   * is UTC), a bigint cast as SIGNED (a string compared with a number would compare as doubles).
   */
  mysqlAfter(cursor: string | undefined | null): { sql: string; values: (string | null)[] } {
    if (!cursor) return { sql: "TRUE", values: [] };
    const parts = this.decode(cursor);
    const op = this.direction === "desc" ? "<" : ">";
    const params = this.columns.map((c) => (c.type === "bigint" ? "CAST(? AS SIGNED)" : "?"));
    return {
      sql: `(${this.columns.map((c) => quoteMysql(c.column)).join(", ")}) ${op} (${params.join(", ")})`,
      values: parts.map((part, i) => (this.columns[i]?.type === "timestamptz" ? part.replace("T", " ").replace("Z", "") : part)),
    };
  }

  encode(parts: readonly string[]): string {
    return Buffer.from(JSON.stringify([this.name, ...parts])).toString("base64url");
  }

  /** The cursor's parts, or InvalidCursorError (a 400 naming the cursor) for anything this list never returned. */
  decode(cursor: string): string[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    } catch {
      throw new InvalidCursorError();
    }
    if (
      !Array.isArray(parsed) ||
      parsed.length !== this.columns.length + 1 ||
      parsed[0] !== this.name ||
      !this.columns.every((c, i) => validPart(c.type, parsed[i + 1]))
    ) {
      throw new InvalidCursorError();
    }
    return parsed.slice(1) as string[];
  }

  /**
   * The page of rows fetched with LIMIT limit + 1 (the extra row says whether there is a next
   * page), and the cursor after its last row, read from its keyset_i columns.
   */
  page<R extends object>(rows: readonly R[], limit: number): { rows: R[]; nextCursor: string | null } {
    const page = rows.slice(0, limit);
    const last = page[page.length - 1] as Record<string, unknown> | undefined;
    if (rows.length <= limit || !last) return { rows: page, nextCursor: null };
    return { rows: page, nextCursor: this.encode(this.columns.map((_, i) => String(last[`keyset_${i}`]))) };
  }
}
