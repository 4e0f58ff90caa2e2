/** The roles the browser tests sign in as; scripts/e2e.ts makes one token for each. */
export type E2eRole = "viewer" | "operator" | "admin" | "platform-admin";

/** The tenant the viewer, operator and admin tokens belong to (one of the seed's tenants). */
export const E2E_TENANT = "acme";

/** How many one-time login codes scripts/e2e.ts makes for the viewer's token (e2e/auth.ts loginCode). */
export const E2E_LOGIN_CODE_COUNT = 2;
