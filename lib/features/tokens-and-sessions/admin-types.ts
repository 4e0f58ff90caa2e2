/** The admin pages' types, inferred from the contract (lib/features/tokens-and-sessions/contract.ts, lib/features/audit/contract.ts). */

export const ADMIN_QUERY_ROOT = "admin";
