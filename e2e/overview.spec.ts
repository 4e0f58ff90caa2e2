import { expect, test } from "@playwright/test";
import { RANGE_LABELS } from "../lib/features/overview/overview-types";
import { SEED_EXPECTED } from "../lib/features/overview/testing/seed-overview";
import { bearer, loginAs } from "./auth";
import { SCREENSHOT_DIR } from "./env";

/**
 * The on-call Overview on the seeded database (lib/features/overview/testing/seed-overview.ts): charts with
 * points, filters in the URL, a copied URL restoring the view, links to the Keys page, an invalid
 * window shown as an error, and screenshots in light, dark and at 390 px (test-results/screenshots).
 */
// A shared, loaded machine: generous timeouts (tests never assert a duration).
test.describe.configure({ timeout: 120_000 });
// The Overview across every tenant: a platform token (a tenant token sees its own tenant only).
test.beforeEach(async ({ page }) => loginAs(page, "platform-admin"));

const expected = SEED_EXPECTED["24h"].totals;

test("loads with the seeded data and the charts have points", async ({ page }) => {
  await page.goto("/overview");
  await expect(page.getByTestId("metrics-source")).toHaveText("PostgreSQL rollups");
  await expect(page.getByTestId("stat-claims").locator(".stat-value")).toHaveText(String(expected.claims));
  await expect(page.getByTestId("stat-suppressions").locator(".stat-value")).toHaveText(String(expected.duplicateSuppressions));
  await expect(page.getByTestId("stat-uncaught").locator(".stat-value")).toHaveText(String(expected.uncaughtViolations));
  // Each tile's number stands under its label, not run into it ("Deliveries27").
  for (const tile of ["deliveries", "suppressions", "stuck"]) {
    const label = await page.getByTestId(`stat-${tile}`).locator(".stat-label").boundingBox();
    const value = await page.getByTestId(`stat-${tile}`).locator(".stat-value").boundingBox();
    expect(value!.y, tile).toBeGreaterThanOrEqual(label!.y + label!.height - 1);
  }
  for (const chart of ["suppressions", "violations", "claim-rate", "latency"]) {
    const figure = page.getByTestId(`chart-${chart}`);
    await expect(figure).toHaveAttribute("data-mounted", "yes", { timeout: 60_000 });
    expect(Number(await figure.getAttribute("data-points")), chart).toBeGreaterThan(0);
    // recharts drew the series: an area, bar or line path inside the SVG.
    await expect(
      figure.locator("svg .recharts-area-area, svg .recharts-bar-rectangle path, svg .recharts-line-curve").first(),
    ).toBeAttached();
  }
  await expect(page.getByTestId("job-type-row").filter({ hasText: "sync-search-index" })).toContainText("not wired up");
  await expect(page.getByTestId("alert")).toHaveCount(8);
  await expect(page.getByTestId("alert").first().getByRole("link", { name: "Runbook" })).toHaveAttribute(
    "href",
    "/overview/runbook/OnceboardUncaughtUniqueViolation",
  );
});

test("filters change the URL, and a copied URL restores the same view", async ({ page, context }) => {
  await page.goto("/overview");
  await page.getByRole("navigation", { name: "Time range" }).getByRole("link", { name: "Last 6 hours" }).click();
  await expect(page).toHaveURL(/window=6h/);
  await page.getByRole("combobox", { name: "Job type" }).fill("capture-payment");
  await page.getByRole("combobox", { name: "Tenant" }).fill("globex");
  await page.getByRole("button", { name: "Apply", exact: true }).click();
  await expect(page).toHaveURL(/jobType=capture-payment/);
  await expect(page).toHaveURL(/tenant=globex/);
  await expect(page.getByTestId("job-type-row")).toHaveCount(1);
  const copied = page.url();
  const shown = (await page.getByTestId("tiles").textContent()) ?? "";

  const other = await context.newPage();
  await other.goto(copied);
  await expect(other.getByRole("navigation", { name: "Time range" }).getByRole("link", { name: "Last 6 hours" })).toHaveAttribute(
    "aria-current",
    "true",
  );
  await expect(other.getByRole("combobox", { name: "Job type" })).toHaveValue("capture-payment");
  await expect(other.getByRole("combobox", { name: "Tenant" })).toHaveValue("globex");
  await expect(other.getByTestId("tiles")).toHaveText(shown);
});

test("with a tenant filter every tile, chart, table and alert answers for it or says it is every tenant's", async ({ page }) => {
  await page.goto("/overview?tenant=globex&jobType=capture-payment");
  await expect(page.getByTestId("stat-suppressions").getByTestId("stat-scope")).toHaveText("globex");
  await expect(page.getByTestId("stat-uncaught").getByTestId("stat-scope")).toHaveText("globex");
  for (const tile of ["deliveries", "redeliveries", "claims"])
    await expect(page.getByTestId(`stat-${tile}`).getByTestId("stat-scope"), tile).toHaveText("all tenants");
  // The tile and the job-type table count the same suppressions: globex's.
  const tile = (await page.getByTestId("stat-suppressions").locator(".stat-value").textContent()) ?? "";
  const row = page.getByTestId("job-type-row").filter({ hasText: "capture-payment" });
  await expect(row.locator("td").nth(2)).toHaveText(tile);
  await expect(page.getByTestId("job-types-scope")).toHaveText(
    "suppressed and uncaught: globex's; deliveries, redeliveries and claims: all tenants",
  );
  await expect(page.getByTestId("alerts-scope")).toContainText("all tenants");
  for (const chart of ["claim-rate", "latency", "waits"])
    await expect(page.getByTestId(`chart-${chart}-meta`), chart).toContainText("all tenants");
  await expect(page.getByTestId("chart-suppressions-meta")).not.toContainText("all tenants");
  // The job-type filter reaches the alerts: no instance of another job type is listed.
  for (const text of await page.getByTestId("alert").allTextContents()) expect(text).not.toMatch(/job_type=(?!capture-payment)/);
});

test("an unknown job type in the URL says so, as a 404", async ({ page }) => {
  expect((await page.goto("/overview?jobType=capture-paymnet"))?.status()).toBe(404);
  await expect(page.getByTestId("unknown-job-type")).toContainText("No worker ever reported a job type named capture-paymnet");
  expect((await page.goto("/overview?jobType=capture-payment"))?.status()).toBe(200);
  await expect(page.getByTestId("tiles")).toBeVisible();
  await expect(page.getByTestId("unknown-job-type")).toHaveCount(0);
});

test("a stuck claim links to the Keys page; a violation group to its list, and each listed key to its page", async ({ page }) => {
  await page.goto("/overview");
  // The Keys seed adds a stuck receipt of its own: pick the Overview seed's stuck capture.
  const stuck = page.getByTestId("stuck-claim").filter({ hasText: "capture-payment:in_progress:" }).first().getByRole("link");
  await expect(stuck).toHaveAttribute(
    "href",
    /^\/keys\?tenant=[^&]+&q=capture-payment%3Ain_progress%3A[^&]+&key=capture-payment%3Ain_progress%3A/,
  );
  await expect(page.getByTestId("violations-banner")).toContainText(`${expected.uncaughtViolations} uncaught unique violations`);
  // The group's link names its constraint; its tenant and job type stand beside it in the row.
  const group = page
    .getByTestId("violations-banner")
    .getByRole("listitem")
    .filter({ hasText: "send-receipt" })
    .first()
    .getByTestId("violation-group");
  await expect(group).toHaveAttribute("href", /^\/violations\?tenant=globex&jobType=send-receipt&constraint=/);
  await group.click();
  await expect(page).toHaveURL(/\/violations\?tenant=globex&jobType=send-receipt/);
  const rows = page.getByTestId("violation-row");
  // One row per violation, each on its own key: the group's count, not one key standing for it.
  await expect(rows.first()).toBeVisible();
  const keys = await page.getByTestId("violation-key").allTextContents();
  expect(new Set(keys).size).toBe(keys.length);
  await expect(page.getByTestId("violation-key").filter({ hasText: /^send-receipt:order-100$/ })).toHaveAttribute(
    "href",
    "/keys?tenant=globex&q=send-receipt%3Aorder-100&key=send-receipt%3Aorder-100",
  );
});

test("the stuck-claim link opens that claim: one row, called stuck in the list and in its detail", async ({ page }) => {
  await page.goto("/overview");
  const stuck = page.getByTestId("stuck-claim").filter({ hasText: "capture-payment:in_progress:" }).first();
  const key = ((await stuck.getByRole("link").textContent()) ?? "").trim();
  await stuck.getByRole("link").click();
  await expect(page).toHaveURL(/\/keys\?/);
  await expect(page.getByTestId("key-row")).toHaveCount(1);
  await expect(page.getByTestId("key-row")).toContainText(key);
  await expect(page.getByTestId("key-row").getByTestId("status-badge")).toHaveText("stuck");
  await expect(page.getByTestId("key-detail").getByTestId("status-badge").first()).toHaveText("stuck");
});

test("an invalid window is shown as the API's error beside the filters, never replaced, and a preset fixes it", async ({
  page,
  request,
}) => {
  const api = await (await request.get("/api/v1/overview?window=zzz", { headers: bearer("platform-admin") })).json();
  expect((await page.goto("/overview?window=zzz&jobType=capture-payment"))?.status()).toBe(400);
  const alert = page.getByRole("main").getByRole("alert");
  await expect(alert).toContainText("This link has an invalid filter");
  await expect(alert).toContainText(api.error.message);
  await expect(alert).toContainText("INVALID_INPUT");
  // The filters stay, holding what the link says, and nothing is charted for it.
  await expect(page.getByRole("form", { name: "Filters" }).getByRole("combobox", { name: "Job type" })).toHaveValue(
    "capture-payment",
  );
  await expect(page.getByTestId("chart-suppressions")).toHaveCount(0);
  await page.getByRole("navigation", { name: "Time range" }).getByRole("link", { name: RANGE_LABELS["24h"] }).click();
  await expect(page).toHaveURL(/window=24h/);
  await expect(page.getByTestId("chart-suppressions")).toBeVisible();
  await expect(page.getByTestId("invalid-query")).toHaveCount(0);
});

test("screenshots: light, dark and 390 px", async ({ browser }) => {
  for (const [name, options] of [
    ["light", { colorScheme: "light" as const, viewport: { width: 1360, height: 900 } }],
    ["dark", { colorScheme: "dark" as const, viewport: { width: 1360, height: 900 } }],
    ["390px", { colorScheme: "light" as const, viewport: { width: 390, height: 844 } }],
  ] as const) {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    await loginAs(page, "platform-admin");
    await page.goto("/overview");
    await expect(page.getByTestId("chart-suppressions")).toHaveAttribute("data-mounted", "yes", { timeout: 60_000 });
    if (name === "390px") {
      // Nothing wider than the screen: the page does not scroll sideways.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(1);
    }
    await page.screenshot({ path: `${SCREENSHOT_DIR}/overview-${name}.png`, fullPage: true });
    await context.close();
  }
});
