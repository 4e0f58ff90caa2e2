import type { Scope } from "../../auth/scope";
import { Keyset } from "../../console/keyset";
import { redactOutcome } from "../../console/redact";
import type { Prisma } from "../../db/generated/client";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { type AuditFilter, auditWhere } from "./audit-filter";
import type { AuditResponse, AuditRow } from "./contract";

/**
 * The audit log's order: newest first by id. The insert trigger draws id and sets `at`
 * (clock_timestamp) under the chain head's row lock, one row at a time, so id order is time order
 * and ties cannot happen; and Prisma reads times to the millisecond, which no exact cursor can hold.
 */
const AUDIT_KEYSET = new Keyset("audit", [{ column: "id", type: "bigint" }]);

/**
 * GET /api/v1/audit and the Audit log page: audit rows matching the filter (lib/features/audit/audit-filter.ts:
 * a tenant scope's own rows only), newest first, keyset-paginated on id. Read through Prisma (an
 * admin table); the primary key serves the order.
 */
export async function listAudit(
  scope: Scope,
  input: AuditFilter & { cursor?: string; limit: number },
  db: Pick<PrismaClient, "auditLog" | "apiToken"> = getPrisma(),
): Promise<AuditResponse> {
  const before = input.cursor ? BigInt(AUDIT_KEYSET.decode(input.cursor)[0] as string) : null;
  const rows = await db.auditLog.findMany({
    where: {
      ...auditWhere(scope, input),
      ...(await actorFilterFor(scope, input, db)),
      ...(before !== null ? { id: { lt: before } } : {}),
    },
    orderBy: { id: "desc" },
    take: input.limit + 1,
  });
  const page = AUDIT_KEYSET.page(
    rows.map((r) => ({ ...r, keyset_0: r.id })),
    input.limit,
  );
  const entries = await auditRowsFor(scope, page.rows, db);
  return { entries: await withOutcomes(entries, db), nextCursor: page.nextCursor };
}

/** The result of a `requested` row whose outcome row never came. */
const OUTCOME_UNKNOWN = "unknown";

/**
 * How long after its `requested` row an outcome row can come: the write between them is one
 * statement under the console's statement timeout, and the outcome is appended right after.
 * Bounds the look-up to the `at` index's window instead of the whole log.
 */
const OUTCOME_WITHIN_MS = 15 * 60_000;

/**
 * Each `requested` row of the page (a write on a MySQL effects store, audited before it was tried)
 * with the result recorded after it under the same request id, or `unknown` when none was: so the
 * Audit log shows an action whose outcome the console never learnt as exactly that.
 */
async function withOutcomes(entries: AuditRow[], db: Pick<PrismaClient, "auditLog">): Promise<AuditRow[]> {
  const requested = entries.filter((e) => e.result === "requested" && requestOf(e.detail) !== null);
  if (requested.length === 0) return entries;
  const times = requested.map((e) => Date.parse(e.at));
  const outcomes = await db.auditLog.findMany({
    where: {
      action: { in: [...new Set(requested.map((e) => e.action))] },
      result: { not: "requested" },
      at: { gte: new Date(Math.min(...times)), lte: new Date(Math.max(...times) + OUTCOME_WITHIN_MS) },
      OR: requested.map((e) => ({ detail: { path: ["request"], equals: requestOf(e.detail) as string } })),
    },
    orderBy: { id: "asc" },
    select: { result: true, detail: true },
  });
  // The first outcome of a request is what it did (a repeat of it, a bulk item resumed, answers the same).
  const byRequest = new Map<string, string>();
  for (const o of outcomes) {
    const request = requestOf(o.detail);
    if (request !== null && !byRequest.has(request)) byRequest.set(request, o.result);
  }
  return entries.map((e) => {
    const request = e.result === "requested" ? requestOf(e.detail) : null;
    return request === null ? e : { ...e, outcome: byRequest.get(request) ?? OUTCOME_UNKNOWN };
  });
}

function requestOf(detail: unknown): string | null {
  const request = detail && typeof detail === "object" ? (detail as { request?: unknown }).request : undefined;
  return typeof request === "string" ? request : null;
}

interface StoredAuditRow {
  id: bigint;
  at: Date;
  tokenId: string | null;
  actor: string;
  tenantId: string | null;
  action: string;
  target: string | null;
  result: string;
  detail: unknown;
  ip: string | null;
}

/** What a tenant is shown in place of an actor who is not one of its own tokens. */
const OUTSIDE_ACTOR = "withheld: not one of this tenant's tokens (the platform, or a person signed in)";

/**
 * The rows as `scope` may see them. A tenant's rows include what the platform did to it (a
 * platform admin reading one of its keys): the tenant sees that it happened, not who, from which
 * token or address. An actor counts as the tenant's own when the row's token is one of the
 * tenant's tokens; anything else (a platform token, an OIDC person, anonymous) is withheld.
 */
export async function auditRowsFor(
  scope: Scope,
  rows: StoredAuditRow[],
  db: Pick<PrismaClient, "apiToken">,
): Promise<AuditRow[]> {
  if (scope.platform) return rows.map(auditRowOf);
  const tenant = scope.tenant;
  const tokenIds = [...new Set(rows.flatMap((r) => (r.tokenId ? [r.tokenId] : [])))];
  const own = new Set(
    tokenIds.length === 0 || tenant === null
      ? []
      : (await db.apiToken.findMany({ where: { id: { in: tokenIds }, tenantId: tenant }, select: { id: true } })).map(
          (t) => t.id,
        ),
  );
  return rows.map((r) =>
    r.tokenId !== null && own.has(r.tokenId)
      ? auditRowOf(r)
      : { ...auditRowOf(r), tokenId: null, actor: OUTSIDE_ACTOR, ip: null },
  );
}

/**
 * A tenant's actor filter matches its own tokens' rows only: an actor it is not shown must not be
 * found by name either (filtering by a platform admin's name would say what they did).
 */
export async function actorFilterFor(
  scope: Scope,
  filter: AuditFilter,
  db: Pick<PrismaClient, "apiToken">,
): Promise<Prisma.AuditLogWhereInput> {
  if (scope.platform || !filter.actor) return {};
  const own =
    scope.tenant === null ? [] : await db.apiToken.findMany({ where: { tenantId: scope.tenant }, select: { id: true } });
  return { tokenId: { in: own.map((t) => t.id) } };
}

/** A stored row as the API, the page and the export show it. */
function auditRowOf(r: StoredAuditRow): AuditRow {
  return {
    id: r.id.toString(),
    at: r.at.toISOString(),
    tokenId: r.tokenId,
    actor: r.actor,
    tenantId: r.tenantId,
    action: r.action,
    target: r.target,
    result: r.result,
    // Notes, filters and messages people and errors wrote: through the redaction hook like every
    // stored value the console shows or exports (the page, GET /api/v1/audit and the export).
    detail: r.detail === null || r.detail === undefined ? r.detail : redactOutcome(r.detail),
    ip: r.ip,
  };
}
