import { sqlStateOf } from "./retryable";

function findField(error: unknown, field: string, depth = 0): unknown {
  if (!error || typeof error !== "object" || depth > 4) return undefined;
  const e = error as Record<string, unknown>;
  if (e[field] !== undefined && e[field] !== null) return e[field];
  for (const next of ["cause", "meta", "driverAdapterError"]) {
    const found = findField(e[next], field, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * If `error` is a unique violation (SQLSTATE 23505 from pg, or Prisma's P2002), the name of the
 * violated constraint ("unknown" when the driver does not say); otherwise null.
 */
export function uniqueViolationConstraint(error: unknown): string | null {
  const prismaCode = (error as { code?: unknown } | null)?.code;
  if (sqlStateOf(error) !== "23505" && prismaCode !== "P2002") return null;
  const constraint = findField(error, "constraint");
  if (typeof constraint === "string") return constraint;
  if (constraint && typeof constraint === "object") {
    const c = constraint as { index?: unknown; fields?: unknown };
    if (typeof c.index === "string") return c.index;
    if (Array.isArray(c.fields)) return c.fields.join(",");
  }
  const target = findField(error, "target");
  if (typeof target === "string") return target;
  if (Array.isArray(target)) return target.join(",");
  return "unknown";
}

/**
 * The last occurrence of an uncaught violation, so the console can link a violation count to the
 * keys involved (uncaught_violations_minute.last_tenant_id / last_key / last_message_id, migration
 * 20261201020000_auth). For the rollup's violation upsert: `ON CONFLICT … DO UPDATE SET
 * last_tenant_id = EXCLUDED.last_tenant_id, last_key = EXCLUDED.last_key, last_message_id = EXCLUDED.last_message_id`.
 */
export interface ViolationOccurrence {
  tenant: string;
  key: string;
  messageId: string | null;
}

export function violationOccurrence(spec: { tenant: string; key: string; messageId?: string | null }): ViolationOccurrence {
  return { tenant: spec.tenant, key: spec.key, messageId: spec.messageId ?? null };
}
