import { Scope } from "./scope";

/**
 * The scope a background action (a bulk action run by the console's runner, after the request that
 * started it has gone) reads and changes rows with: the tenant it was started for, or every tenant
 * (null: a platform action). Made here because only lib/auth makes a Scope; the runner holds the
 * database itself, like an operator's command-line tool, and narrows to the action's tenant.
 */
export function scopeOfStoredAction(tenant: string | null): Scope {
  return tenant === null ? Scope.operator() : Scope.operator().narrow(tenant);
}
