import { expect, type Locator, type Page, test } from "@playwright/test";
import { loginAs } from "./auth";

// Charts read at a glance: both axes named (a log scale says so), readable ticks on a log count
// axis, and a unit that is the width of the buckets the series was counted in.
test.describe.configure({ timeout: 90_000 });
test.use({ colorScheme: "light" });
test.beforeEach(async ({ page }) => loginAs(page, "platform-admin"));

/** The SVG texts of a chart's axis names (recharts draws each as a text with class recharts-label, x first). */
const axisLabels = (chart: Locator) => chart.locator("svg .recharts-label");
/** The value axis's tick texts (recharts draws them in a layer of their own, named for the axis). */
const yTicks = (chart: Locator) => chart.locator(".recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value");

async function drawn(page: Page, chart: Locator) {
  // The first render of a responsive chart waits for its size; allow a loaded machine time.
  await expect(chart.locator("svg .recharts-cartesian-axis").first()).toBeAttached({ timeout: 30_000 });
  return page;
}

test("the gap histograms name both log axes and count in powers of ten", async ({ page }) => {
  await page.goto("/gaps");
  const histogram = page.getByTestId("gap-histogram");
  await drawn(page, histogram);
  await expect(axisLabels(histogram)).toHaveText(["gap since the first claim (log scale)", "duplicates (log scale)"]);
  await expect(yTicks(histogram).first()).toBeAttached();
  const ticks = await yTicks(histogram).allTextContents();
  // 0, then powers of ten (1, 10, 100, 1K…): never 0 / 2,000 / 10,000.
  expect(ticks.length).toBeGreaterThanOrEqual(3);
  expect(ticks[0]).toBe("0");
  for (const tick of ticks.slice(1)) expect(tick).toMatch(/^1(0{0,2}|0{0,2}[KMB])$/);
  // Every small multiple says the same.
  const small = page.locator(".small-multiple").first();
  await drawn(page, small);
  await expect(axisLabels(small)).toHaveText(["gap since the first claim (log scale)", "duplicates (log scale)"]);

  const overTime = page.getByTestId("gaps-over-time");
  await drawn(page, overTime);
  await expect(axisLabels(overTime)).toHaveText(["day (UTC)", "gap (log scale)"]);
});

test("every Overview chart names its time axis and its unit, the unit its meta line says", async ({ page }) => {
  await page.goto("/overview?window=24h");
  for (const id of ["suppressions", "violations", "claim-rate", "latency", "waits"]) {
    const chart = page.getByTestId(`chart-${id}`);
    if ((await chart.locator(".chart-empty").count()) > 0) continue; // an empty chart says so, with no axes
    await drawn(page, chart);
    const unit = (await page.getByTestId(`chart-${id}-meta`).textContent())?.split(" · ")[0];
    await expect(axisLabels(chart), id).toHaveText(["time (UTC)", unit ?? "?"]);
  }
  await expect(page.getByTestId("chart-suppressions-meta")).toHaveText(/^suppressions per \d+ min$/);
});

test("a tenant's suppressions, counted per hour, are charted per hour beside charts of minutes", async ({ page }) => {
  await page.goto("/overview?window=24h&tenant=globex");
  await expect(page.getByTestId("chart-suppressions-meta")).toHaveText("suppressions per 1 h");
  await expect(page.getByTestId("chart-suppressions")).toHaveAttribute("data-step-seconds", "3600");
  await expect(page.getByTestId("chart-violations-meta")).toHaveText(/^violations per \d+ min$/);
  await expect(page.getByRole("main")).toContainText("so their chart has a point per hour");
});
