import type { Queryable } from "../db/types";
import { consoleDatabase } from "./database";
import type { EffectSearchResponse, EffectStatus, EffectSummary } from "./effects-types";

export interface EffectSearch {
  tenant: string;
  /** A key prefix or any fragment of it ("ord-123" finds "capture:ord-123"), case-insensitive. */
  q?: string;
  status?: EffectStatus;
  jobType?: string;
  from?: Date;
  to?: Date;
  cursor?: string;
  limit: number;
  now?: Date;
}

export class InvalidCursorError extends Error {
  readonly code = "INVALID_INPUT";
}

/** Searches without `from` look this far back: a retention longer than this needs an explicit from. */
export const DEFAULT_SEARCH_DAYS = 90;

// Search within one tenant, newest first, keyset-paginated on (created_at, key).
// Why no trigram index: a GIN index on key would be written by every claim (the hot path, see
// docs/benchmarks.md), for a question asked during incidents. Instead the search is bounded to one
// tenant and a time range (partition pruning), scanned through each partition's (tenant_id, key)
// index with strpos() as a filter: cost grows with the tenant's rows in the range, not the table's.
// strpos, not LIKE: a "%" or "_" in the fragment is a literal character.
const SEARCH_SQL = `
SELECT key, job_type, status, policy, attempt, created_at, completed_at, duplicate_count, first_message_id,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
  FROM effects
 WHERE tenant_id = $1
   AND created_at >= $2::timestamptz AND created_at < $3::timestamptz
   AND ($4::text IS NULL OR strpos(lower(key), $4) > 0)
   AND ($5::text IS NULL OR status = $5)
   AND ($6::text IS NULL OR job_type = $6)
   AND ($7::timestamptz IS NULL OR (created_at, key) < ($7::timestamptz, $8::text))
 ORDER BY created_at DESC, key DESC
 LIMIT $9`;

function decodeCursor(cursor: string): [string, string] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === "string" &&
      typeof parsed[1] === "string" &&
      !Number.isNaN(Date.parse(parsed[0]))
    ) {
      return [parsed[0], parsed[1]];
    }
  } catch {
    // falls through
  }
  throw new InvalidCursorError("invalid query: cursor is not one this API returned");
}

export function encodeCursor(at: string, key: string): string {
  return Buffer.from(JSON.stringify([at, key])).toString("base64url");
}

/** GET /api/v1/effects: one tenant's effects matching a key fragment and filters, newest first. */
export async function searchEffects(search: EffectSearch, db: Queryable = consoleDatabase()): Promise<EffectSearchResponse> {
  const now = search.now ?? new Date();
  const from = search.from ?? new Date(now.getTime() - DEFAULT_SEARCH_DAYS * 86_400_000);
  const to = search.to ?? new Date(now.getTime() + 60_000);
  const [cursorAt, cursorKey] = search.cursor ? decodeCursor(search.cursor) : [null, null];
  const q = search.q?.trim() ? search.q.trim().toLowerCase() : null;
  const { rows } = await db.query<{
    key: string;
    job_type: string;
    status: EffectStatus;
    policy: string;
    attempt: number;
    created_at: Date;
    completed_at: Date | null;
    duplicate_count: number;
    first_message_id: string | null;
    cursor_at: string;
  }>(SEARCH_SQL, [
    search.tenant,
    from,
    to,
    q,
    search.status ?? null,
    search.jobType ?? null,
    cursorAt,
    cursorKey,
    search.limit + 1,
  ]);
  const page = rows.slice(0, search.limit);
  const effects: EffectSummary[] = page.map((r) => ({
    key: r.key,
    jobType: r.job_type,
    status: r.status,
    policy: r.policy,
    attempt: r.attempt,
    createdAt: r.created_at.toISOString(),
    completedAt: r.completed_at ? r.completed_at.toISOString() : null,
    duplicateCount: r.duplicate_count,
    firstMessageId: r.first_message_id,
  }));
  const last = page[page.length - 1];
  return {
    tenant: search.tenant,
    effects,
    nextCursor: rows.length > search.limit && last ? encodeCursor(last.cursor_at, last.key) : null,
  };
}
