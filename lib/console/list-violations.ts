import type { Scope } from "../auth/scope";
import type { StatementQueryable } from "../db/types";
import { consoleDatabase } from "./database";
import { redactMessage } from "./redact";
import type { UncaughtViolation, ViolationListResponse } from "./violations-types";

export interface ViolationSearch {
  /** The tenant asked for: a platform scope narrows to it; a tenant scope reads its own whatever it says. */
  tenant?: string | null;
  jobType?: string;
  constraint?: string;
  from?: Date;
  to?: Date;
  cursor?: string;
  limit: number;
  now?: Date;
}

export class InvalidViolationCursorError extends Error {
  readonly code = "INVALID_INPUT";
}

/** Lists without `from` look this far back (the rows themselves live as long as the effects). */
export const DEFAULT_VIOLATION_DAYS = 90;

// uncaught_violation_keys (library migration 0008), newest first, keyset-paginated on
// (occurred_at, id): the (tenant_id, occurred_at, id) index for one tenant, (occurred_at, id) for
// every tenant. The first page's bound is (to, the largest uuid): every row before `to`.
const LIST = {
  name: "console_list_violations",
  text: `
SELECT id::text AS id, occurred_at, tenant_id, job_type, constraint_name, key, message_id, message,
       to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
  FROM uncaught_violation_keys
 WHERE ($1::text IS NULL OR tenant_id = $1)
   AND occurred_at >= $2::timestamptz AND occurred_at < $3::timestamptz
   AND (occurred_at, id) < ($4::timestamptz, $5::uuid)
   AND ($6::text IS NULL OR job_type = $6)
   AND ($7::text IS NULL OR constraint_name = $7)
 ORDER BY occurred_at DESC, id DESC
 LIMIT $8`,
};

const LARGEST_UUID = "ffffffff-ffff-ffff-ffff-ffffffffffff";
const CURSOR_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function decodeViolationCursor(cursor: string): [string, string] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === "string" &&
      typeof parsed[1] === "string" &&
      CURSOR_AT.test(parsed[0]) &&
      !Number.isNaN(Date.parse(parsed[0])) &&
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(parsed[1])
    ) {
      return [parsed[0], parsed[1]];
    }
  } catch {
    // falls through
  }
  throw new InvalidViolationCursorError("invalid query: cursor is not one this API returned");
}

function encodeCursor(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString("base64url");
}

interface ViolationRow {
  id: string;
  occurred_at: Date;
  tenant_id: string;
  job_type: string;
  constraint_name: string;
  key: string;
  message_id: string | null;
  message: string | null;
  cursor_at: string;
}

/** A stored violation as the console shows it: its message through the redaction hook. */
export function toUncaughtViolation(
  r: Omit<ViolationRow, "cursor_at" | "occurred_at"> & { occurred_at: Date | string },
): UncaughtViolation {
  return {
    id: r.id,
    occurredAt: new Date(r.occurred_at).toISOString(),
    tenant: r.tenant_id,
    jobType: r.job_type,
    constraint: r.constraint_name,
    key: r.key,
    messageId: r.message_id,
    message: r.message === null ? null : redactMessage(r.message),
  };
}

/** GET /api/v1/violations: every uncaught violation (one row per affected key and time) of the scope's tenant (a platform scope: every tenant, or `search.tenant`), newest first. */
export async function listViolations(
  scope: Scope,
  search: ViolationSearch,
  db: StatementQueryable = consoleDatabase(),
): Promise<ViolationListResponse> {
  const tenant = scope.narrow(search.tenant).tenant;
  const now = search.now ?? new Date();
  const from = search.from ?? new Date(now.getTime() - DEFAULT_VIOLATION_DAYS * 86_400_000);
  const to = search.to ?? new Date(now.getTime() + 60_000);
  // The first page: (to, the largest uuid) takes every row before `to`.
  const [cursorAt, cursorId] = search.cursor ? decodeViolationCursor(search.cursor) : [to.toISOString(), LARGEST_UUID];
  const { rows } = await db.query<ViolationRow>({
    ...LIST,
    values: [tenant, from, to, cursorAt, cursorId, search.jobType ?? null, search.constraint ?? null, search.limit + 1],
  });
  const page = rows.slice(0, search.limit);
  const last = page[page.length - 1];
  return {
    tenant,
    violations: page.map(toUncaughtViolation),
    nextCursor: rows.length > search.limit && last ? encodeCursor(last.cursor_at, last.id) : null,
  };
}
