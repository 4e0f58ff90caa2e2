import { expect, type Page } from "@playwright/test";
import { BASE_URL, FILLED_URL } from "./env";
import type { E2eRole } from "./roles";

export { E2E_TENANT, type E2eRole } from "./roles";

function tokens(variable = "ONCEBOARD_E2E_TOKENS"): Record<E2eRole, string> {
  const raw = process.env[variable];
  if (!raw) throw new Error(`${variable} is not set: run the browser tests with \`npm run test:e2e\``);
  return JSON.parse(raw) as Record<E2eRole, string>;
}

/** The secret of the token scripts/e2e.ts made for a role. */
export function tokenFor(role: E2eRole): string {
  return tokens()[role];
}

/** The n-th one-time login code scripts/e2e.ts made for the viewer's token (each works once). */
export function viewerLoginCode(n: number): string {
  const raw = process.env.ONCEBOARD_E2E_LOGIN_CODES;
  if (!raw) throw new Error("ONCEBOARD_E2E_LOGIN_CODES is not set: run the browser tests with `npm run test:e2e`");
  const code = (JSON.parse(raw) as string[])[n];
  if (!code) throw new Error(`no login code ${n}: raise E2E_LOGIN_CODE_COUNT in e2e/roles.ts`);
  return code;
}

/** `Authorization: Bearer …` headers for API calls as a role. */
export function bearer(role: E2eRole): Record<string, string> {
  return { authorization: `Bearer ${tokenFor(role)}` };
}

/**
 * Signs the page's browser context in as a role: the session cookie is set by the healthy console
 * (cookies are not scoped by port, and both consoles share ONCEBOARD_SECRET, so it works on the
 * broken one too). Fast: one request, not the login form (e2e/auth.spec.ts tests the form).
 */
export async function loginAs(page: Page, role: E2eRole): Promise<void> {
  const response = await page.request.post(`${BASE_URL}/api/auth/login`, {
    data: { token: tokenFor(role) },
    headers: { origin: BASE_URL },
  });
  expect(response.status(), `sign-in as ${role}`).toBe(200);
}

/**
 * Signs the page's browser context in to the filled console (its own database, its own tokens).
 * Cookies are not scoped by port: a context signed in here is signed out of the seeded console.
 */
export async function loginToFilled(page: Page, role: E2eRole): Promise<void> {
  const response = await page.request.post(`${FILLED_URL}/api/auth/login`, {
    data: { token: tokens("ONCEBOARD_E2E_FILLED_TOKENS")[role] },
    headers: { origin: FILLED_URL },
  });
  expect(response.status(), `sign-in to the filled console as ${role}`).toBe(200);
}
