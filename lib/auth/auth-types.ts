/** Roles, weakest first: each includes what the ones before it may do. */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

/**
 * Who is asking: a token (directly as a Bearer, or behind a console session), or a person signed in
 * through the identity provider (OIDC, always behind a console session, with no token).
 */
export interface Principal {
  /** null: a person signed in through the identity provider (then `oidcSubject` says who). */
  tokenId: string | null;
  /** The identity provider's `sub` for a person signed in with OIDC; absent for a token. */
  oidcSubject?: string;
  /** What the audit log names: the token's name and its short suffix, e.g. "oncall (…a1b2c3)", or the person, e.g. "Alice <alice@example.com> (oidc:alice)". */
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

/** What the per-principal rate limit counts under: the token, or the identity provider's subject. */
export function principalKey(principal: Pick<Principal, "tokenId" | "oidcSubject">): string {
  if (principal.tokenId !== null) return principal.tokenId;
  return `oidc:${principal.oidcSubject ?? ""}`;
}
