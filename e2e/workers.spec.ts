import { expect, type Page, test } from "@playwright/test";
import { bearer, loginAs } from "./auth";
import { SCREENSHOT_DIR, WORKER_DOWN_URL, WORKER_UP_URL } from "./env";
import { WORKER_EXPECTED, WORKER_NAME, WORKER_RESTARTS } from "./worker-metrics";

// scripts/e2e.ts gives the seeded console WORKER_METRICS_URLS = a fake worker (e2e/worker-metrics.ts)
// and a closed port; the console with the unreachable database gets none.
const panel = (page: Page) => page.getByRole("region", { name: /^Workers/ });
const count = (n: number) => n.toLocaleString("en-US");

// Platform data (a worker's full /metrics behind each link): signed in as the platform.
test.beforeEach(async ({ page }) => loginAs(page, "platform-admin"));

test.describe("in light", () => {
  test.use({ colorScheme: "light" });

  test("the Workers panel shows an up worker's counters and a down worker's error", async ({ page }) => {
    await page.goto("/overview");
    const workers = panel(page);
    const rows = workers.getByRole("table").locator("tbody tr");
    await expect(rows).toHaveCount(2);

    const up = workers.locator('[data-testid="worker"][data-state="up"]');
    await expect(up.locator("th, td")).toHaveText([
      WORKER_UP_URL,
      "Up",
      "–",
      // Restarts the worker recorded itself (seeded by scripts/e2e.ts), never seen by a scrape.
      String(WORKER_RESTARTS),
      count(WORKER_EXPECTED.claims),
      count(WORKER_EXPECTED.duplicateSuppressions),
      count(WORKER_EXPECTED.redeliveries),
      count(WORKER_EXPECTED.uncaughtViolations),
    ]);
    // Links go through the console (/api/v1/workers/<n>/metrics), so they work from another machine.
    await expect(up.getByRole("link", { name: WORKER_UP_URL })).toHaveAttribute("href", "/api/v1/workers/0/metrics");

    const down = workers.locator('[data-testid="worker"][data-state="down"]');
    // Never named itself: its restarts are unknown, not 0.
    await expect(down.locator("th, td")).toHaveText([WORKER_DOWN_URL, "Downconnection refused", "–", "–", "–", "–", "–", "–"]);
    await expect(down.getByRole("link", { name: WORKER_DOWN_URL })).toHaveAttribute("href", "/api/v1/workers/1/metrics");
    await expect(workers.getByRole("heading", { name: /^Workers\s*1 down$/ })).toBeVisible();
    // Env order is kept: the up worker was listed first.
    await expect(rows.first()).toHaveAttribute("data-state", "up");
    await workers.screenshot({ path: `${SCREENSHOT_DIR}/workers-light.png` });
  });

  test("the workers API scrapes live and is never cached", async ({ request }) => {
    const response = await request.get("/api/v1/workers", { headers: bearer("platform-admin") });
    expect(response.status()).toBe(200);
    expect(response.headers()["cache-control"]).toBe("no-store");
    const body = await response.json();
    expect(body.hint).toBeUndefined();
    expect(body.workers).toEqual([
      {
        url: WORKER_UP_URL,
        up: true,
        scrapedAt: expect.any(String),
        ...WORKER_EXPECTED,
        startedAt: null,
        uptimeSeconds: null,
        workerName: WORKER_NAME,
        restarts: WORKER_RESTARTS,
        proxyPath: "/api/v1/workers/0/metrics",
      },
      {
        url: WORKER_DOWN_URL,
        up: false,
        error: "connection refused",
        scrapedAt: expect.any(String),
        claims: null,
        duplicateSuppressions: null,
        redeliveries: null,
        uncaughtViolations: null,
        workerName: null,
        restarts: null,
        proxyPath: "/api/v1/workers/1/metrics",
      },
    ]);
  });

  test("a tenant viewer is told the workers are not shown: their addresses are internal, their counters every tenant's", async ({
    page,
    request,
  }) => {
    await loginAs(page, "viewer");
    await page.goto("/overview");
    await expect(panel(page).getByTestId("workers-withheld")).toContainText("Workers are not shown to a tenant");
    await expect(panel(page).locator('[data-testid="worker"]')).toHaveCount(0);
    await expect(panel(page)).not.toContainText(WORKER_UP_URL);
    const body = await (await request.get("/api/v1/workers", { headers: bearer("viewer") })).json();
    expect(body.workers).toEqual([]);
    expect(body.withheld).toContain("not shown to a tenant");
    const metrics = await request.get("/api/v1/workers/0/metrics", { headers: bearer("viewer") });
    expect(metrics.status()).toBe(403);
  });

  test("a failed workers load shows an error with a retry that recovers", async ({ page }) => {
    await page.route("**/api/v1/workers", (route) =>
      route.fulfill({
        status: 500,
        contentType: "application/json",
        body: JSON.stringify({
          error: {
            code: "CONFIG_INVALID",
            message: 'invalid configuration: WORKER_METRICS_URLS has an entry that is not an http(s) URL: "nope"',
          },
        }),
      }),
    );
    await page.goto("/overview");
    const alert = panel(page).getByRole("alert");
    // The query retries a failed load with backoff before it shows the error: allow for that.
    await expect(alert).toContainText("The workers' addresses are misconfigured", { timeout: 30_000 });
    await expect(alert).toContainText('not an http(s) URL: "nope"');
    await expect(alert).toContainText("CONFIG_INVALID");

    await page.unroute("**/api/v1/workers");
    await alert.getByRole("button", { name: "Retry" }).click();
    await expect(panel(page).getByRole("table").locator("tbody tr")).toHaveCount(2);
    await expect(panel(page).getByRole("alert")).toHaveCount(0);
  });
});

test.describe("in dark", () => {
  test.use({ colorScheme: "dark" });

  test("the Workers panel reads in the dark theme", async ({ page }) => {
    await page.goto("/overview");
    // Columns after the URL: state, uptime, restarts, then claims.
    await expect(panel(page).locator('[data-testid="worker"][data-state="up"] td').nth(3)).toHaveText(
      count(WORKER_EXPECTED.claims),
    );
    await panel(page).screenshot({ path: `${SCREENSHOT_DIR}/workers-dark.png` });
  });
});
