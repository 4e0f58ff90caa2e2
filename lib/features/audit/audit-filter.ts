import type { Scope } from "../../auth/scope";
import type { Prisma } from "../../db/generated/client";

/** What the Audit log page, GET /api/v1/audit and its export filter on (one definition for the three). */
export interface AuditFilter {
  tenant?: string | null;
  actor?: string;
  action?: string;
  target?: string;
  from?: Date;
  to?: Date;
}

/**
 * The rows a scope may read that match `filter`: a tenant scope's own tenant whatever `tenant`
 * says; a platform scope's `tenant`, or every row. An action ending in "." is a family ("token."
 * matches token.create and token.revoke); otherwise it is exact.
 */
export function auditWhere(scope: Scope, filter: AuditFilter): Prisma.AuditLogWhereInput {
  const tenant = scope.narrow(filter.tenant).tenant;
  return {
    ...(tenant !== null ? { tenantId: tenant } : {}),
    ...(filter.actor ? { actor: { contains: filter.actor, mode: "insensitive" as const } } : {}),
    ...(filter.action ? { action: filter.action.endsWith(".") ? { startsWith: filter.action } : filter.action } : {}),
    ...(filter.target ? { target: filter.target } : {}),
    at: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lt: filter.to } : {}) },
  };
}
