import { expect, type Page, test } from "@playwright/test";
import { SEED_EXPECTED } from "../lib/console/testing/seed-overview";
import { bearer, loginAs } from "./auth";
import { SCREENSHOT_DIR } from "./env";

test.use({ colorScheme: "light" });
test.beforeEach(async ({ page }) => loginAs(page, "viewer"));

async function expectStat(page: Page, id: string, value: number) {
  await expect(page.getByTestId(`stat-${id}`).locator(".stat-value")).toHaveText(value.toLocaleString("en-US"));
}

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
  await expectStat(page, "effects", SEED_EXPECTED["24h"].totals.effects);
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

test("the Overview shows the seeded database's counts", async ({ page }) => {
  await page.goto("/overview");
  const expected = SEED_EXPECTED["24h"];
  await expectStat(page, "effects", expected.totals.effects);
  await expectStat(page, "completed", expected.totals.completed);
  await expectStat(page, "in-progress", expected.totals.in_progress);
  await expect(page.getByTestId("stat-in-progress")).toContainText("1 stuck");
  await expectStat(page, "failed", expected.totals.failed);
  await expectStat(page, "abandoned", expected.totals.abandoned);
  await expectStat(page, "claims", expected.totals.claims);
  await expectStat(page, "suppressions", expected.totals.duplicateSuppressions);
  await expectStat(page, "uncaught", expected.totals.uncaughtViolations);

  // Job types table: one row per job type, exact numbers in each column.
  const table = page.getByRole("table", { name: "Job types" });
  await expect(table.locator("tbody tr")).toHaveCount(3);
  for (const [jobType, e] of Object.entries(expected.jobTypes)) {
    const cells = table.getByTestId(`job-type-${jobType}`).locator("th, td");
    const inProgress = jobType === "capture-payment" ? `${e.in_progress}1 stuck` : String(e.in_progress);
    const deliveries = e.claims + e.duplicateSuppressions;
    const rate =
      deliveries > 0 && e.duplicateSuppressions > 0
        ? `${Math.round((e.duplicateSuppressions / deliveries) * 1000) / 10}%`
        : deliveries > 0
          ? "0%"
          : "–";
    await expect(cells).toHaveText([
      jobType,
      String(e.effects),
      String(e.completed),
      inProgress,
      String(e.failed),
      String(e.abandoned),
      String(e.claims),
      String(e.duplicateSuppressions),
      rate,
      String(e.uncaughtViolations),
    ]);
  }
  // Busiest job type first.
  await expect(table.locator("tbody tr").first()).toHaveAttribute("data-testid", "job-type-capture-payment");

  // Status breakdown and uncaught violations, named by constraint.
  await expect(page.getByTestId("status-completed")).toContainText(`Completed${expected.totals.completed}`);
  const uncaught = page.getByRole("table", { name: /Uncaught unique violations/ });
  await expect(uncaught.getByTestId("uncaught-send-receipt-receipts_order_id_key").locator("td").nth(1)).toHaveText("2");
  await expect(uncaught.getByTestId("uncaught-capture-payment-payments_pkey").locator("td").nth(1)).toHaveText("1");

  // The chart: one bar per job type with suppressions, labelled with its count.
  const chart = page.getByTestId("suppressions-chart");
  await expect(chart).toHaveAttribute("aria-label", /capture-payment: 7, send-receipt: 2, sync-search-index: 0/);
  await expect(chart.locator(".recharts-bar-rectangle path")).toHaveCount(2);
  await expect(chart.locator(".recharts-label-list")).toContainText("7");

  await page.screenshot({ path: `${SCREENSHOT_DIR}/overview-light.png`, fullPage: true });
});

test("the time window lives in the URL", async ({ page }) => {
  await page.goto("/overview");
  await expectStat(page, "effects", SEED_EXPECTED["24h"].totals.effects);
  const windows = page.getByRole("navigation", { name: "Time window" });
  await expect(windows.getByRole("link", { name: "last 24 hours" })).toHaveAttribute("aria-current", "true");

  await windows.getByRole("link", { name: "last 7 days" }).click();
  await expect(page).toHaveURL(/\?window=7d$/);
  await expectStat(page, "effects", SEED_EXPECTED["7d"].totals.effects);
  await expectStat(page, "suppressions", SEED_EXPECTED["7d"].totals.duplicateSuppressions);
  await expect(windows.getByRole("link", { name: "last 7 days" })).toHaveAttribute("aria-current", "true");

  // A deep link opens on its window.
  await page.goto("/overview?window=1h");
  await expectStat(page, "effects", SEED_EXPECTED["1h"].totals.effects);
  await expectStat(page, "uncaught", SEED_EXPECTED["1h"].totals.uncaughtViolations);
  await expect(page.getByRole("table", { name: "Job types" }).locator("tbody tr")).toHaveCount(3);
});

test("the API answers with typed errors for bad input", async ({ request }) => {
  const response = await request.get("/api/v1/overview?window=5y", { headers: bearer("viewer") });
  expect(response.status()).toBe(400);
  const body = await response.json();
  expect(body.error.code).toBe("INVALID_INPUT");
  expect(body.error.message).toMatch(/window/);

  const ok = await request.get("/api/v1/overview?window=24h", { headers: bearer("viewer") });
  expect(ok.status()).toBe(200);
  expect((await ok.json()).totals.effects).toBe(SEED_EXPECTED["24h"].totals.effects);
  expect((await (await request.get("/api/v1/health")).json()).ok).toBe(true);
});

test("a failed load shows an error with a retry that recovers", async ({ page }) => {
  let failures = 0;
  await page.route("**/api/v1/overview?*", async (route) => {
    failures++;
    await route.fulfill({
      status: 503,
      contentType: "application/json",
      body: JSON.stringify({ error: { code: "DATABASE_UNAVAILABLE", message: "cannot reach PostgreSQL (connection refused)" } }),
    });
  });
  await page.goto("/overview");
  const alert = page.getByRole("main").getByRole("alert");
  await expect(alert).toContainText("The database cannot be reached");
  await expect(alert).toContainText("cannot reach PostgreSQL (connection refused)");
  expect(failures).toBeGreaterThan(0);

  await page.unroute("**/api/v1/overview?*");
  await alert.getByRole("button", { name: "Retry" }).click();
  await expectStat(page, "effects", SEED_EXPECTED["24h"].totals.effects);
  await expect(page.getByRole("main").getByRole("alert")).toHaveCount(0);
});

test("an empty window explains what will appear", async ({ page }) => {
  await page.route("**/api/v1/overview?*", (route) =>
    route.fulfill({
      contentType: "application/json",
      body: JSON.stringify({
        window: "24h",
        from: new Date(Date.now() - 86_400_000).toISOString(),
        to: new Date().toISOString(),
        totals: {
          effects: 0,
          in_progress: 0,
          completed: 0,
          failed: 0,
          abandoned: 0,
          stuck: 0,
          claims: 0,
          duplicateSuppressions: 0,
          uncaughtViolations: 0,
        },
        jobTypes: [],
        uncaughtViolations: [],
      }),
    }),
  );
  await page.goto("/overview");
  await expect(page.getByRole("heading", { name: "No effects or worker activity in the last 24 hours" })).toBeVisible();
  await expect(page.getByText("effects.job()")).toBeVisible();
  await expectStat(page, "effects", 0);
});
