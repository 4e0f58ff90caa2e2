import type { Scope } from "../../auth/scope";
import { CROSS_TENANT_SEARCH_DAYS, TENANT_SEARCH_DAYS } from "./effects-types";

/** The filter of browse by state, as the API parsed it: every read of the family takes this one. */
export interface StateFilter {
  /** The tenant asked for: a platform scope that names none reads every tenant; a tenant scope reads its own whatever it says. */
  tenant?: string | null;
  jobType?: string;
  from?: Date;
  to?: Date;
  /** The instant leases are compared with (default: now). */
  now?: Date;
}

/** The filter with its defaults applied: the window every count and list of one answer shares. */
export interface AppliedStateFilter {
  tenant: string | null;
  jobType: string | null;
  from: Date;
  to: Date;
  now: Date;
}

/**
 * The scope's tenant (or the one a platform scope names, or every tenant) and the window: by
 * default as the Keys search looks back, 90 days for one tenant and 7 for every tenant (no index
 * spans tenants, so the days bound what the read scans), to a minute from now.
 */
export function applyStateFilter(scope: Scope, filter: StateFilter): AppliedStateFilter {
  const tenant = scope.narrow(filter.tenant).tenant;
  const now = filter.now ?? new Date();
  const days = tenant === null ? CROSS_TENANT_SEARCH_DAYS : TENANT_SEARCH_DAYS;
  return {
    tenant,
    jobType: filter.jobType ?? null,
    from: filter.from ?? new Date(now.getTime() - days * 86_400_000),
    to: filter.to ?? new Date(now.getTime() + 60_000),
    now,
  };
}

/** What an answer of the family says of its filter. */
export function appliedFields(f: AppliedStateFilter) {
  return { tenant: f.tenant, jobType: f.jobType, from: f.from.toISOString(), to: f.to.toISOString(), asOf: f.now.toISOString() };
}
