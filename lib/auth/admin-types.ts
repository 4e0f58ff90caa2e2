import type { Role } from "./auth-types";

/** A machine token as the admin page and GET /api/v1/tokens show it: never its secret or hash. */
export interface TokenView {
  id: string;
  name: string;
  /** null: a platform token. */
  tenantId: string | null;
  role: Role;
  /** The secret's last 6 characters, how people tell tokens apart. */
  suffix: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  state: "active" | "revoked" | "expired";
}

export interface TokensResponse {
  tokens: TokenView[];
}

/** POST /api/v1/tokens: the new token and its secret, which is shown this once and never again. */
export interface CreatedTokenResponse {
  token: TokenView;
  secret: string;
}

/** A live console session. `id` is its public id: it grants nothing (the cookie's secret never leaves the browser). */
export interface SessionView {
  id: string;
  /** The token it was signed in with, as the audit log names it. */
  actor: string;
  tokenId: string;
  tenantId: string | null;
  role: Role;
  /** How it was signed in: token, link (one-time login link), or what else console_sessions holds. */
  signedInWith: string;
  clientIp: string | null;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
}

export interface SessionsResponse {
  sessions: SessionView[];
}

export const ADMIN_QUERY_ROOT = "admin";

/** Whether the audit log's hash chain holds, as the Audit log page shows it. */
export interface AuditIntegrityView {
  /** checking: the first walk of a large log has not reached its end yet. */
  state: "ok" | "broken" | "checking";
  /** Rows found to fit (platform admins only). */
  rowsChecked: number | null;
  checkedAt: string | null;
  problem: string | null;
}
