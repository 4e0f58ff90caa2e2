/** The admin pages' types, inferred from the contract (lib/contract/admin.ts, lib/contract/audit.ts). */
export type {
  CreatedTokenResponse,
  SessionsResponse,
  SessionView,
  TokensResponse,
  TokenView,
} from "../contract/admin";
export type { AuditIntegrityView } from "../contract/audit";

export const ADMIN_QUERY_ROOT = "admin";
