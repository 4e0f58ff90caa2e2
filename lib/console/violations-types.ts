/** One uncaught unique violation: the key it hit, when, and the handler's (redacted) error. */
export interface UncaughtViolation {
  id: string;
  occurredAt: string;
  tenant: string;
  jobType: string;
  constraint: string;
  key: string;
  messageId: string | null;
  /** The driver's error message, after the redaction hook. */
  message: string | null;
}

/** GET /api/v1/violations: newest first; `nextCursor` asks for the next (older) page. */
export interface ViolationListResponse {
  /** The tenant listed, or null for every tenant (platform sessions). */
  tenant: string | null;
  violations: UncaughtViolation[];
  nextCursor: string | null;
}

/** The Overview banner's line: one (tenant, job type, constraint) group over the range. */
export interface ViolationGroup {
  tenant: string;
  jobType: string;
  constraint: string;
  /** Violations in the group. */
  count: number;
  /** Distinct keys among them. */
  keys: number;
  lastSeen: string;
}

export interface ViolationListFilters {
  tenant?: string | null;
  jobType?: string | null;
  constraint?: string | null;
  from?: string | null;
  to?: string | null;
  cursor?: string | null;
  limit?: string | null;
}

/** The Violations page for these filters (the Overview banner links each group here). */
export function violationsHref(filters: ViolationListFilters = {}): string {
  const search = new URLSearchParams();
  for (const name of ["tenant", "jobType", "constraint", "from", "to", "limit", "cursor"] as const) {
    const value = filters[name];
    if (value) search.set(name, value);
  }
  const text = search.toString();
  return text ? `/violations?${text}` : "/violations";
}
