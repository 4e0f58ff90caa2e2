/** The admin pages' types, inferred from the contract (lib/features/tokens-and-sessions/contract.ts, lib/features/audit/contract.ts). */

export type { AuditIntegrityView } from "../audit/contract";
export type {
  CreatedTokenResponse,
  SessionsResponse,
  SessionView,
  TokensResponse,
  TokenView,
} from "./contract";

export const ADMIN_QUERY_ROOT = "admin";
