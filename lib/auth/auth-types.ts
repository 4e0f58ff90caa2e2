/** Roles, weakest first: each includes what the ones before it may do. */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** Who is asking: a token (directly as a Bearer, or behind a console session). */
export interface Principal {
  tokenId: string;
  /** What the audit log names: the token's name and its short suffix, e.g. "oncall (…a1b2c3)". */
  actor: string;
  /** null: a platform token, which spans tenants. */
  tenantId: string | null;
  role: Role;
}

/** What a page may show about the signed-in principal. */
export type SessionInfo = Principal;

export function roleAtLeast(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(required);
}
