/**
 * The Audit log page's URL: its filters as typed, the query string they make, and where a row's
 * target lives in the console (beside keys-types.ts: values the components use, so not in the zod contract).
 */

/** The audit page's filters as they appear in its URL (strings as typed, so a link round-trips). */
export interface AuditPageFilters {
  tenant: string | null;
  actor: string | null;
  action: string | null;
  target: string | null;
  from: string | null;
  to: string | null;
}

export const AUDIT_FILTER_KEYS = ["tenant", "actor", "action", "target", "from", "to"] as const;

/** The filters as a link typed them (one it refused included, for its form to show again). */
export function typedAuditFilters(typed: Record<string, string | undefined>): AuditPageFilters {
  const { tenant = null, actor = null, action = null, target = null, from = null, to = null } = typed;
  return { tenant, actor, action, target, from, to };
}

/** The query string of `filters` plus `extra` (cursor, format), empty values left out. */
export function auditSearch(filters: AuditPageFilters, extra: Record<string, string> = {}): string {
  const search = new URLSearchParams();
  for (const key of AUDIT_FILTER_KEYS) {
    const value = filters[key];
    if (value) search.set(key, value);
  }
  for (const [key, value] of Object.entries(extra)) search.set(key, value);
  return search.toString();
}

/**
 * Where a row's target lives in the console: an effect key's page (its tenant's), a token on the
 * Tokens & sessions page; null for what has no page (a session, a route, nothing).
 */
export function auditTargetHref(row: { action: string; target: string | null; tenantId: string | null }): string | null {
  if (!row.target) return null;
  if (row.action.startsWith("effect.") && row.tenantId && row.action !== "effect.search") {
    return `/keys?tenant=${encodeURIComponent(row.tenantId)}&key=${encodeURIComponent(row.target)}`;
  }
  if (row.action.startsWith("token.")) return `/admin#token-${encodeURIComponent(row.target)}`;
  return null;
}
