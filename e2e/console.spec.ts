import { expect, test } from "@playwright/test";
import { SEED_EXPECTED } from "../lib/features/overview/testing/seed-overview";
import { bearer, loginAs } from "./auth";

test.use({ colorScheme: "light" });
test.beforeEach(async ({ page }) => loginAs(page, "viewer"));
test.describe.configure({ timeout: 120_000 });

test("the console loads on the Overview", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/overview$/);
  await expect(page).toHaveTitle("Overview · Onceboard");
  await expect(page.getByRole("heading", { level: 1, name: "Overview" })).toBeVisible();
  const nav = page.getByRole("navigation", { name: "Console" });
  await expect(nav.getByRole("link", { name: "Overview" })).toHaveAttribute("aria-current", "page");
  await expect(page.getByRole("status").filter({ hasText: "PostgreSQL" })).toBeVisible();
});

test("the navigation works", async ({ page }) => {
  await page.goto("/no-such-page");
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  const overviewLink = page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Overview" });
  await expect(overviewLink).not.toHaveAttribute("aria-current", "page");
  await overviewLink.click();
  await expect(page).toHaveURL(/\/overview$/);
  await expect(overviewLink).toHaveAttribute("aria-current", "page");
  // The viewer is a tenant's: the fleet's claims are withheld from it (test/api/api-matrix.test.ts), so
  // the page it reached is checked by its heading, not by a fleet figure.
  await expect(page.getByRole("heading", { level: 1, name: "Overview" })).toBeVisible();
});

test("the console is usable from the keyboard", async ({ page }) => {
  await page.goto("/no-such-page");
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  // The first Tab reaches the skip link; then the brand, then the navigation.
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Onceboard home" })).toBeFocused();
  await page.keyboard.press("Tab");
  const overviewLink = page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Overview" });
  await expect(overviewLink).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/overview$/);
  await expect(overviewLink).toHaveAttribute("aria-current", "page");

  // The skip link moves focus past the navigation to the page.
  await page.goto("/overview");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await expect(page.locator("main#main")).toBeFocused();
});

test("the API answers with typed errors for bad input", async ({ request }) => {
  const response = await request.get("/api/v1/overview?window=5y", { headers: bearer("viewer") });
  expect(response.status()).toBe(400);
  const body = await response.json();
  expect(body.error.code).toBe("INVALID_INPUT");
  expect(body.error.message).toMatch(/window/);

  // The fleet's claims are a platform figure: a tenant's viewer gets null for them.
  const ok = await request.get("/api/v1/overview?window=24h", { headers: bearer("platform-admin") });
  expect(ok.status()).toBe(200);
  expect((await ok.json()).totals.claims).toBe(SEED_EXPECTED["24h"].totals.claims);
  expect((await (await request.get("/api/v1/health")).json()).ok).toBe(true);
  const metrics = await request.get("/api/metrics", { headers: bearer("platform-admin") });
  expect(await metrics.text()).toContain(
    'onceboard_console_http_request_duration_seconds_count{route="/api/v1/overview",method="GET",status="200"}',
  );
});
