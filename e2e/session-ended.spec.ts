import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { bearer, E2E_TENANT } from "./auth";
import { BASE_URL } from "./env";

// A session an admin ends lands on the sign-in page saying so, not on a bare "Sign in".
test.use({ colorScheme: "light" });

const admin = { ...bearer("platform-admin"), origin: BASE_URL, "content-type": "application/json" };

/** A new viewer token of the e2e tenant, signed in with in this page's browser: its session is this test's alone. */
async function signInWithNewToken(page: Page, request: APIRequestContext, name: string): Promise<string> {
  const created = await request.post(`${BASE_URL}/api/v1/tokens`, {
    headers: admin,
    data: { name, role: "viewer", tenant: E2E_TENANT },
  });
  expect(created.status(), await created.text()).toBe(201);
  const { token, secret } = await created.json();
  const login = await page.request.post(`${BASE_URL}/api/auth/login`, { data: { token: secret }, headers: { origin: BASE_URL } });
  expect(login.status()).toBe(200);
  await page.goto("/keys");
  await expect(page.getByRole("heading", { name: "Keys", level: 1 })).toBeVisible();
  return token.id as string;
}

async function sessionOf(request: APIRequestContext, tokenId: string): Promise<string> {
  const listed = await (await request.get(`${BASE_URL}/api/v1/sessions?tenant=${E2E_TENANT}`, { headers: admin })).json();
  const session = listed.sessions.find((s: { tokenId: string | null }) => s.tokenId === tokenId);
  expect(session, "the new token's session is listed").toBeTruthy();
  return session.id as string;
}

test("a session revoked by an admin: the next page is the sign-in page, saying the session was revoked", async ({
  page,
  request,
}) => {
  const tokenId = await signInWithNewToken(page, request, `e2e-revoked-session-${Date.now()}`);
  const revoked = await request.post(`${BASE_URL}/api/v1/sessions/${await sessionOf(request, tokenId)}/revoke`, {
    headers: admin,
  });
  expect(revoked.status(), await revoked.text()).toBe(200);

  await page.goto("/violations");
  await expect(page).toHaveURL(/\/login\?reason=session-revoked&next=%2Fviolations$/);
  await expect(page.getByRole("main").getByRole("alert")).toHaveText(
    /Your session was revoked \(by an admin on Tokens & sessions, or by signing out\)/,
  );
});

test("a session whose token was revoked: the sign-in page says the token was", async ({ page, request }) => {
  const tokenId = await signInWithNewToken(page, request, `e2e-revoked-token-${Date.now()}`);
  const revoked = await request.post(`${BASE_URL}/api/v1/tokens/${tokenId}/revoke`, { headers: admin });
  expect(revoked.status(), await revoked.text()).toBe(200);

  await page.goto("/overview");
  await expect(page).toHaveURL(/\/login\?reason=token-revoked&next=%2Foverview$/);
  await expect(page.getByRole("main").getByRole("alert")).toHaveText(/The token this session signed in with has been revoked/);
});

test("no cookie at all: the sign-in page asks to sign in, with no reason", async ({ page }) => {
  await page.goto("/keys");
  await expect(page).toHaveURL(/\/login\?next=%2Fkeys$/);
  await expect(page.getByRole("main").getByRole("alert")).toHaveCount(0);
});
