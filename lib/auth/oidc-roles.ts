import fs from "node:fs";
import { z } from "zod";
import { ConfigError, loadConfig } from "../config";
import { ROLES, type Role, roleAtLeast } from "./auth-types";

/**
 * What a person's groups (the ID token's OIDC_GROUPS_CLAIM) let them do in the console: one role,
 * in one tenant or on the platform. Never a default: no mapped group, no access.
 *
 * Groups map by name, `onceboard-platform-<role>` and `onceboard-tenant-<tenant>-<role>`, or, when
 * OIDC_ROLE_MAPPING_FILE is set, only through that file:
 *   { "sre-oncall": { "role": "operator", "platform": true }, "acme-support": { "role": "viewer", "tenant": "acme" } }
 * Several groups: the strongest role wins within one scope. Grants for two scopes (two tenants, or a
 * tenant role stronger than the platform role) are refused: a session has one scope, and picking one
 * for the person would hide the other without telling them. A tenant grant no stronger than a
 * platform grant adds nothing (the platform role already covers the tenant) and is dropped.
 */
interface Grant {
  role: Role;
  /** null: the platform. */
  tenantId: string | null;
}

type RoleDecision =
  | { kind: "granted"; grant: Grant }
  | { kind: "no-role"; groups: string[] }
  | { kind: "two-scopes"; scopes: string[] };

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const TENANT_SHAPE = /^[^\s\u0000-\u001f\u007f]{1,255}$/;
const roleSchema = z.enum(ROLES);
const mappingSchema = z.record(
  z.string().min(1),
  z.union([
    z.strictObject({ role: roleSchema, platform: z.literal(true) }),
    z.strictObject({ role: roleSchema, tenant: z.string().regex(TENANT_SHAPE, "a tenant id without spaces") }),
  ]),
);
type RoleMapping = z.infer<typeof mappingSchema>;

const PLATFORM_GROUP = /^onceboard-platform-(viewer|operator|admin)$/;
const TENANT_GROUP = /^onceboard-tenant-(.+)-(viewer|operator|admin)$/;

/** The grant one group name carries: through the mapping file when there is one, else by its name. */
function grantOfGroup(group: string, mapping: RoleMapping | null): Grant | null {
  if (mapping) {
    const entry = Object.hasOwn(mapping, group) ? mapping[group] : undefined;
    if (!entry) return null;
    return { role: entry.role, tenantId: "tenant" in entry ? entry.tenant : null };
  }
  const platform = PLATFORM_GROUP.exec(group);
  if (platform) return { role: platform[1] as Role, tenantId: null };
  const tenant = TENANT_GROUP.exec(group);
  if (tenant && TENANT_SHAPE.test(tenant[1] ?? "")) return { role: tenant[2] as Role, tenantId: tenant[1] ?? null };
  return null;
}

/** The groups a claim value lists: a list of strings, or one string; anything else lists none. */
export function groupsOfClaim(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((entry): entry is string => typeof entry === "string");
  return [];
}

function strongest(a: Role, b: Role): Role {
  return roleAtLeast(a, b) ? a : b;
}

/** One role in one scope from a person's groups, or why not. */
export function decideRole(groups: string[], mapping: RoleMapping | null): RoleDecision {
  let platform: Role | null = null;
  const tenants = new Map<string, Role>();
  for (const group of groups) {
    const grant = grantOfGroup(group, mapping);
    if (!grant) continue;
    if (grant.tenantId === null) platform = platform ? strongest(platform, grant.role) : grant.role;
    else tenants.set(grant.tenantId, strongest(tenants.get(grant.tenantId) ?? grant.role, grant.role));
  }
  if (platform !== null) {
    const platformRole = platform;
    const beyond = [...tenants].filter(([, role]) => !roleAtLeast(platformRole, role));
    if (beyond.length === 0) return { kind: "granted", grant: { role: platformRole, tenantId: null } };
    return { kind: "two-scopes", scopes: ["platform", ...beyond.map(([tenant]) => tenant)] };
  }
  if (tenants.size === 0) return { kind: "no-role", groups };
  if (tenants.size > 1) return { kind: "two-scopes", scopes: [...tenants.keys()] };
  const [[tenantId, role]] = [...tenants] as [[string, Role]];
  return { kind: "granted", grant: { role, tenantId } };
}

/** OIDC_ROLE_MAPPING_FILE, parsed and checked; null when unset. A bad file is a ConfigError naming the variable. */
export function loadRoleMapping(file = loadConfig().OIDC_ROLE_MAPPING_FILE): RoleMapping | null {
  if (file === undefined) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigError(`invalid configuration: OIDC_ROLE_MAPPING_FILE cannot be read as JSON (${(error as Error).message})`);
  }
  const parsed = mappingSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(file)"} ${issue.message}`);
  throw new ConfigError(`invalid configuration: OIDC_ROLE_MAPPING_FILE ${problems.join("; ")}`);
}
