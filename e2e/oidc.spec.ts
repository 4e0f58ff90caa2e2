import { expect, type Page, test } from "@playwright/test";

/**
 * Single sign-on in a browser, through the full redirect flow: the console's sign-in page, the
 * real OpenID Provider's own login and consent forms (oidc-provider, started by scripts/e2e.ts),
 * back to the console, and out again through the provider's end_session.
 */
// Each test goes through the console's and the provider's forms: on a loaded machine that outlasts
// the default minute (tests never assert a duration).
test.describe.configure({ timeout: 180_000 });

async function signInAtProvider(page: Page, login: string): Promise<void> {
  await page.goto("/login");
  await page.getByTestId("sign-in-sso").click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
}

test("signs in with the identity provider, sees the Overview, and signs out there too", async ({ page }) => {
  await page.goto("/login");
  await expect(page.getByTestId("sign-in-sso")).toHaveText("Sign in with Test IdP");
  await expect(page.getByLabel("Token")).toBeVisible();

  await signInAtProvider(page, "platform-admin");
  await expect(page).toHaveURL(/\/overview$/);
  await expect(page.getByRole("heading", { name: "Overview", level: 1 })).toBeVisible();
  await expect(page.getByTestId("session-badge")).toContainText("Pat Platform");
  await expect(page.getByTestId("session-badge")).toContainText("admin · platform");

  await page.getByRole("button", { name: "Sign out" }).click();
  // The provider asks before ending its own session (RP-initiated logout), then sends the browser back.
  await page.getByRole("button", { name: "Yes, sign me out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/overview");
  await expect(page).toHaveURL(/\/login\?next=%2Foverview$/);
});

test("a person whose groups map to no role gets the no-access page and no session", async ({ page }) => {
  await signInAtProvider(page, "nobody");
  await expect(page).toHaveURL(/\/no-access\?reason=no-role$/);
  await expect(page.getByTestId("no-access")).toContainText("None of your groups");
  await page.goto("/overview");
  await expect(page).toHaveURL(/\/login\?next=%2Foverview$/);
});
