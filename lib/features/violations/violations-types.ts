/** How many groups the totals list (the groups with the most violations first); the total counts every one. */
export const VIOLATION_TOTALS_GROUP_LIMIT = 200;

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
