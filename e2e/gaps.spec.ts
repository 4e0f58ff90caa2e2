import { expect, test } from "@playwright/test";
import { GAPS_SEED_EXPECTED as E } from "../lib/features/retention-and-gaps/testing/seed-gaps";
import { bearer, E2E_TENANT, loginAs } from "./auth";
import { SCREENSHOT_DIR } from "./env";

// The page reads 30 days of rollups and effects; on a loaded 2-core machine a first render is slow.
test.describe.configure({ timeout: 90_000 });

test.beforeEach(async ({ page }) => {
  await loginAs(page, "platform-admin");
});

// The seed (lib/features/retention-and-gaps/testing/seed-gaps.ts) reproduces the demo's finding: a 7-day retention,
// 28 duplicates more than 7 days late, a largest per-effect gap of 3.46 days over a 3-day window.
for (const colorScheme of ["light", "dark"] as const) {
  test.describe(`Delivery gaps, ${colorScheme} theme`, () => {
    test.use({ colorScheme });

    test("renders the histogram with the retention and retry-window lines, and the advice in red", async ({ page }) => {
      await page.goto("/gaps");
      await expect(page.getByRole("heading", { name: "Delivery gaps", level: 1 })).toBeVisible();
      const histogram = page.getByTestId("gap-histogram");
      // The first render of a responsive chart waits for its size; allow a loaded machine time.
      await expect(histogram.locator(".recharts-area-area")).toHaveCount(1, { timeout: 30_000 });
      await expect(histogram.locator(".ref-retention")).toHaveCount(1);
      await expect(histogram.locator(".ref-retry-window")).toHaveCount(1);
      await expect(histogram.getByText("retention 7 d")).toBeVisible();
      await expect(histogram.getByText("retry window 3 d")).toBeVisible();
      await expect(histogram.getByText("1 h", { exact: true })).toBeVisible();
      // The small charts name both lines in full, inside their own box: nothing clipped.
      const small = page.locator(".small-multiple").first();
      const key = small.getByTestId("chart-key");
      await expect(key).toHaveText(/retry window 3 d.*retention 7 d/);
      const box = (await small.boundingBox())!;
      for (const name of [key.locator(".chart-key-retry-window"), key.locator(".chart-key-retention")]) {
        const label = (await name.boundingBox())!;
        expect(label.x).toBeGreaterThanOrEqual(box.x);
        expect(label.x + label.width).toBeLessThanOrEqual(box.x + box.width + 1);
      }

      const advice = page.getByTestId("advice");
      await expect(advice).toHaveAttribute("data-verdict", "below_observed_max");
      await expect(page.getByTestId("advice-recommended")).toHaveText(`${E.recommendedDays} d`);
      await expect(page.getByTestId("advice-verdict")).toContainText(
        `${E.lateBeyondRetention} duplicates in the window arrived later`,
      );
      await expect(page.getByTestId("advice-retention")).toHaveCSS(
        "color",
        await page.evaluate(() => {
          const probe = document.createElement("span");
          probe.style.color = "var(--danger)";
          document.body.append(probe);
          const color = getComputedStyle(probe).color;
          probe.remove();
          return color;
        }),
      );
      await expect(page.getByTestId("gap-stats-job_type").getByRole("row")).toHaveCount(3);
      await expect(page.getByTestId("gaps-over-time").locator(".recharts-line")).toHaveCount(2);

      const late = page.getByTestId("late-duplicates");
      const link = late.getByRole("link", { name: E.effectsMaxGapKey });
      await expect(link).toHaveAttribute(
        "href",
        `/keys?tenant=acme&q=${encodeURIComponent(E.effectsMaxGapKey)}&key=${encodeURIComponent(E.effectsMaxGapKey)}`,
      );
      await expect(late.getByText("3.46 d")).toBeVisible();

      await page.screenshot({ path: `${SCREENSHOT_DIR}/gaps-${colorScheme}.png`, fullPage: true });
      await page.screenshot({ path: `docs/screenshots/gaps-${colorScheme}.png`, fullPage: true });
    });
  });
}

test("keeps the filters in the URL and shows an invalid one as an error", async ({ page }) => {
  await page.goto("/gaps?range=7d&jobType=send-receipt");
  await expect(page.getByRole("link", { name: "Last 7 days" })).toHaveAttribute("aria-current", "true");
  await expect(page.getByTestId("gap-stats-job_type").getByRole("row")).toHaveCount(2);
  await expect(page.getByTestId("gaps-range")).toContainText("Last 7 days");
  // A 400 with the page's filters kept beside the error, the job type as the URL gave it.
  expect((await page.goto("/gaps?range=2y&jobType=send-receipt"))?.status()).toBe(400);
  await expect(page.locator(".state-error")).toContainText("invalid query: range");
  const filters = page.getByTestId("gaps-invalid");
  await expect(filters.getByRole("link", { name: "Last 7 days" })).toBeVisible();
  await expect(filters.locator('select[name="jobType"]')).toHaveValue("send-receipt");
  const api = await page.request.get("/api/v1/gaps?range=2y");
  expect(api.status()).toBe(400);
  expect((await api.json()).error.message).toContain("invalid query: range");
});

test("the advice API answers with the recommendation, its inputs and reasons", async ({ request }) => {
  expect((await request.get("/api/v1/retention/advice")).status()).toBe(401);
  // A tenant token may not read the fleet-wide advice; its gaps are its own tenant's.
  expect((await request.get("/api/v1/retention/advice", { headers: bearer("viewer") })).status()).toBe(403);
  const own = await request.get("/api/v1/gaps?tenant=globex", { headers: bearer("viewer") });
  expect(own.status()).toBe(200);
  expect(await own.json()).toMatchObject({ tenant: E2E_TENANT, source: "effects" });
  const response = await request.get("/api/v1/retention/advice", { headers: bearer("platform-admin") });
  expect(response.status()).toBe(200);
  const advice = await response.json();
  expect(advice.status).toBe("recommended");
  expect(advice.recommendedSeconds).toBe(E.recommendedDays * 86_400);
  expect(advice.comparison.verdict).toBe("below_observed_max");
  expect(advice.inputs.maxRetryWindowSource).toBe("retention_settings.max_retry_window_days (or its default)");
  expect(advice.reasons.length).toBeGreaterThan(0);
});

test("is readable at 390 px", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/gaps");
  await expect(page.getByTestId("gap-histogram")).toBeVisible({ timeout: 30_000 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(1);
});

// The advice's Apply: the change before and after and the partitions it keeps, with a confirmation.
// Confirming changes the fleet's retention, which the other specs (run in parallel) read as 7 d:
// the confirm itself, a stale confirm and a read-only console are proven in test/api/api-matrix.test.ts.
test("a platform admin reviews the advice as a change of the settings before confirming it", async ({ page }) => {
  await page.goto("/gaps");
  await page.getByTestId("advice-apply").click();
  const panel = page.getByTestId("advice-apply-panel");
  const change = panel.getByTestId("advice-change");
  await expect(change.getByRole("row", { name: /Retention/ })).toContainText(`7 d${E.recommendedDays} d`, { timeout: 30_000 });
  await expect(change.getByRole("row", { name: /Retry window/ })).toContainText("unchanged");
  // 23 d instead of 7 d keeps the seed's older partitions the next run would drop today.
  await expect(panel.getByTestId("advice-plan")).toContainText(/keep \d+ partitions? it drops today/);
  await expect(panel.getByTestId("advice-confirm")).toHaveText(`Confirm: set the retention to ${E.recommendedDays} d`);
  await panel.getByRole("button", { name: "Cancel" }).click();
  await expect(panel).toHaveCount(0);
  await expect(page.getByTestId("advice-retention")).toHaveText("7 d");
});

test("the advice's Apply is not offered to a tenant's admin, and its API refuses one", async ({ page, request }) => {
  await loginAs(page, "admin");
  await page.goto("/gaps");
  await expect(page.getByTestId("advice")).toBeVisible({ timeout: 30_000 });
  await expect(page.getByTestId("advice-apply")).toHaveCount(0);
  const refused = await request.post("/api/v1/retention/advice/apply", {
    headers: { ...bearer("admin"), origin: new URL(page.url()).origin },
    data: { retentionDays: E.recommendedDays, expect: { retentionDays: 7, maxRetryWindowDays: 3 } },
  });
  expect(refused.status()).toBe(403);
});
