import { type Browser, expect, type Locator, type Page, test } from "@playwright/test";
import { RECON_LOAD, RECON_SEED, RECONCILED_EFFECTS } from "../lib/features/reconciliation/testing/seed-reconciliation";
import { type E2eRole, loginAs } from "./auth";
import { SCREENSHOT_DIR } from "./env";
import { overflowsOf, settle } from "./pages";

// A shared, loaded machine: generous timeouts (tests never assert a duration).
test.describe.configure({ timeout: 90_000 });

// The seed (lib/features/reconciliation/testing/seed-reconciliation.ts): a completed, a running and a failed run;
// per tenant a duplicate at Stripe, a missing payment and a drift; one object naming no tenant. The load
// (seedReconciliationLoad): the completed window rerun RECON_LOAD.reruns times before, and RECON_LOAD.findings
// drifts of tenant RECON_LOAD.tenant, more than a screen of them.
for (const colorScheme of ["light", "dark"] as const) {
  test.describe(`Reconciliation, ${colorScheme} theme`, () => {
    test.use({ colorScheme });

    test("windows with progress, the tenant's open findings, a finding's two sides beside the list", async ({ page }) => {
      await loginAs(page, "viewer");
      await page.goto("/reconciliation");
      await expect(page.getByRole("heading", { name: "Reconciliation", level: 1 })).toBeVisible();
      const windows = page.getByTestId("run-window");
      await expect(windows).toHaveCount(3);
      await expect(page.locator('[data-testid="run-window"][data-status="running"]').getByTestId("run-progress")).toBeVisible();
      const findings = page.getByTestId("finding-row");
      await expect(findings).toHaveCount(RECON_SEED.perTenant);
      await expect(page.getByTestId("findings-table")).not.toContainText("globex");
      await expect(page.getByTestId("findings-table")).not.toContainText("no tenant named");

      await page.getByTestId("finding-filters").getByLabel("Kind").selectOption("duplicated_at_provider");
      await page.getByTestId("finding-filters").getByRole("button", { name: "Apply" }).click();
      await expect(page).toHaveURL(/kind=duplicated_at_provider/);
      await expect(findings).toHaveCount(1);
      await findings.first().getByTestId("finding-link").click();
      await expect(page).toHaveURL(/finding=\d+/);
      const comparison = page.getByTestId("finding-comparison");
      const ours = page.getByTestId("finding-ours");
      await expect(ours).toContainText(RECON_SEED.duplicateKey("acme"));
      await expect(ours).toContainText("completed");
      await expect(page.getByTestId("finding-detail")).not.toContainText(RECON_SEED.outcomeSecret("acme"));
      await expect(comparison.getByTestId("provider-object-link")).toHaveCount(2);
      for (const id of RECON_SEED.duplicateObjects("acme")) await expect(comparison).toContainText(id);
      // Beside the list at this width: the finding starts where the list does, to its right.
      const [list, detail] = [
        await page.getByTestId("findings-table").boundingBox(),
        await page.getByTestId("finding-detail").boundingBox(),
      ];
      expect(list && detail && detail.x > list.x + list.width - 1 && detail.y < list.y + list.height).toBe(true);
      // The Keys page's own link to a key (filtered to it, so its row is on the first page, and opened).
      const key = RECON_SEED.duplicateKey("acme");
      await expect(ours.getByTestId("finding-key-link")).toHaveAttribute(
        "href",
        `/keys?${new URLSearchParams({ tenant: "acme", q: key, key })}`,
      );
      // A viewer reads, and cannot change a finding, one by one or in bulk.
      await expect(page.getByTestId("finding-state-form")).toHaveCount(0);
      await expect(page.getByTestId("bulk-acknowledge")).toHaveCount(0);
      await page.screenshot({ path: `${SCREENSHOT_DIR}/reconciliation-${colorScheme}.png`, fullPage: true });
      await page.screenshot({ path: `docs/screenshots/reconciliation-${colorScheme}.png`, fullPage: true });
    });
  });
}

/** A signed-in page at a width (1440 × 900 or 390 × 844), in the light theme. */
async function pageAt(browser: Browser, width: 1440 | 390, role: E2eRole): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width, height: width === 390 ? 844 : 900 },
    colorScheme: "light",
  });
  const page = await context.newPage();
  await loginAs(page, role);
  return page;
}

/** Whether an element's box lies inside the window, its top edge and at least `height` px of it (the whole of it when shorter). */
async function inViewport(page: Page, target: Locator, height = 160): Promise<string | null> {
  const box = await target.boundingBox();
  const viewport = page.viewportSize();
  if (!box || !viewport) return "not laid out";
  const bottom = box.y + Math.min(box.height, height);
  return box.y >= 0 && bottom <= viewport.height
    ? null
    : `at y ${Math.round(box.y)}..${Math.round(bottom)} in a ${viewport.height} px window`;
}

/** The open finding's heading and its comparison of the two sides are on the screen. */
async function expectFindingInView(page: Page, id: string) {
  const detail = page.getByTestId("finding-detail");
  await expect(detail.getByRole("heading", { name: `Finding ${id}` })).toBeVisible();
  await expect(detail.getByTestId("finding-comparison")).toBeVisible();
  await settle(page);
  expect(await inViewport(page, detail.getByRole("heading", { name: `Finding ${id}` }))).toBeNull();
  // The rows that say what differs: the ids and the amounts.
  expect(await inViewport(page, detail.locator('[data-field="amount"]'))).toBeNull();
}

test.describe("Reconciliation: runs grouped by window", () => {
  test("a window the scheduler reran shows once, by its latest run, its earlier runs folded and unfolded on demand", async ({
    browser,
  }) => {
    const page = await pageAt(browser, 1440, "platform-admin");
    await page.goto("/reconciliation");
    const windows = page.getByTestId("run-window");
    await expect(windows).toHaveCount(3);
    const rerun = page.locator('[data-testid="run-window"][data-status="completed"]');
    await expect(rerun).toHaveCount(1);
    const fold = rerun.getByTestId("run-window-fold");
    await expect(fold).toHaveText(`Show ${RECON_LOAD.reruns} earlier runs of this window`);
    await expect(fold).toHaveAttribute("aria-expanded", "false");
    await expect(page.getByTestId("earlier-run")).toHaveCount(0);
    // The findings are not pushed below the first screen by the reruns.
    await settle(page);
    expect(await inViewport(page, page.getByTestId("findings-table"), 40)).toBeNull();

    await fold.click();
    await expect(fold).toHaveAttribute("aria-expanded", "true");
    const earlier = rerun.getByTestId("earlier-run");
    await expect(earlier).toHaveCount(RECON_LOAD.reruns);
    await expect(rerun.locator('[data-testid="earlier-run"][data-status="completed"]')).toHaveCount(RECON_LOAD.reruns);
    await page.screenshot({ path: `${SCREENSHOT_DIR}/reconciliation-runs-unfolded.png`, fullPage: true });
    await fold.click();
    await expect(page.getByTestId("earlier-run")).toHaveCount(0);
    await page.context().close();
  });
});

test.describe("Reconciliation: the open finding is in view", () => {
  for (const width of [1440, 390] as const) {
    test(`a deep link to a finding at ${width} px opens it in view, its provider object linked, its amounts whole`, async ({
      browser,
    }) => {
      const page = await pageAt(browser, width, "platform-admin");
      await page.goto(`/reconciliation?tenant=${RECON_LOAD.tenant}`);
      const n = 20;
      const id = await page
        .getByTestId("finding-row")
        .nth(n - 1)
        .getAttribute("data-finding");
      if (!id) throw new Error("no finding row");
      await page.goto(`/reconciliation?tenant=${RECON_LOAD.tenant}&finding=${id}`);
      await expectFindingInView(page, id);
      const detail = page.getByTestId("finding-detail");
      await expect(detail.getByTestId("provider-object-link")).toHaveAttribute(
        "href",
        `https://dashboard.stripe.com/test/payments/${RECON_LOAD.driftObject(n)}`,
      );
      await expect(detail.getByTestId("ours-amount")).toHaveText(String(RECON_LOAD.recordedAmount(n)));
      await expect(detail.getByTestId("theirs-amount")).toHaveText(`${RECON_LOAD.providerAmount(n)} differs`);
      expect(await overflowsOf(page)).toEqual([]);
      await page.screenshot({ path: `docs/screenshots/reconciliation-finding-open-${width}-light.png` });
      await page.context().close();
    });

    test(`a key's verdict opens its finding in view at ${width} px`, async ({ browser }) => {
      const page = await pageAt(browser, width, "viewer");
      await page.goto(`/keys?key=${encodeURIComponent(RECON_SEED.duplicateKey("acme"))}`);
      const link = page.getByTestId("provider-verdict").getByTestId("provider-verdict-finding");
      await link.click();
      await expect(page).toHaveURL(/\/reconciliation\?.*finding=(\d+)/);
      const id = new URL(page.url()).searchParams.get("finding") as string;
      await expectFindingInView(page, id);
      await expect(page.getByTestId("finding-comparison").getByTestId("provider-object-link")).toHaveCount(2);
      await page.context().close();
    });
  }

  test("a finding opened from the middle of the list at 1440 px opens beside it; the list stays where it was", async ({
    browser,
  }) => {
    const page = await pageAt(browser, 1440, "platform-admin");
    await page.goto(`/reconciliation?tenant=${RECON_LOAD.tenant}`);
    await settle(page);
    const row = page.getByTestId("finding-row").nth(24);
    await row.scrollIntoViewIfNeeded();
    const before = await row.boundingBox();
    const scrolled = await page.evaluate(() => window.scrollY);
    expect(scrolled).toBeGreaterThan(400);
    const id = (await row.getAttribute("data-finding")) as string;
    await row.getByTestId("finding-link").click();
    await expect(page).toHaveURL(new RegExp(`finding=${id}`));
    await expectFindingInView(page, id);
    const after = await row.boundingBox();
    expect(Math.abs((after?.y ?? 0) - (before?.y ?? -1000))).toBeLessThan(2);
    await expect(row).toHaveAttribute("aria-selected", "true");
    await page.screenshot({ path: `${SCREENSHOT_DIR}/reconciliation-finding-middle-1440.png` });
    await page.context().close();
  });

  test("at 390 px a finding opened from the middle of the list is brought into view, and Close returns to its row", async ({
    browser,
  }) => {
    const page = await pageAt(browser, 390, "platform-admin");
    await page.goto(`/reconciliation?tenant=${RECON_LOAD.tenant}`);
    await settle(page);
    const row = page.getByTestId("finding-row").nth(24);
    await row.scrollIntoViewIfNeeded();
    const id = (await row.getAttribute("data-finding")) as string;
    await row.getByTestId("finding-link").click();
    await expectFindingInView(page, id);
    await page.getByTestId("finding-close").click();
    await expect(page.getByTestId("finding-detail")).toHaveCount(0);
    await expect(row.getByTestId("finding-link")).toBeFocused();
    expect(await inViewport(page, row, 40)).toBeNull();
    await page.context().close();
  });
});

test.describe("Reconciliation at phone width", () => {
  for (const colorScheme of ["light", "dark"] as const) {
    test(`a finding opened at 390 px fits the screen, its two sides side by side in its columns (${colorScheme})`, async ({
      browser,
    }) => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme });
      const page = await context.newPage();
      await loginAs(page, "operator");
      await page.goto("/reconciliation?kind=duplicated_at_provider");
      await page.getByTestId("finding-row").first().getByTestId("finding-link").click();
      const comparison = page.getByTestId("finding-comparison");
      await expect(comparison.getByTestId("provider-object-link")).toHaveCount(2);
      await settle(page);
      await page.screenshot({ path: `docs/screenshots/reconciliation-finding-390-${colorScheme}.png`, fullPage: true });
      expect(await overflowsOf(page)).toEqual([]);
      // Onceboard's column and both of Stripe's objects on one row, inside the screen.
      const cells = comparison.locator('[data-field="amount"] td');
      await expect(cells).toHaveCount(3);
      const boxes = await Promise.all([0, 1, 2].map((i) => cells.nth(i).boundingBox()));
      expect(boxes.every((b) => b && Math.abs(b.y - (boxes[0]?.y ?? 0)) < 2 && b.x + b.width <= 390)).toBe(true);
      await context.close();
    });
  }
});

test.describe("Reconciliation, as an operator", () => {
  test.use({ colorScheme: "light" });

  test("acknowledges a finding with a note; it leaves the open list", async ({ page }) => {
    await loginAs(page, "operator");
    await page.goto("/reconciliation?kind=drift");
    const findings = page.getByTestId("finding-row");
    await expect(findings).toHaveCount(1);
    await findings.first().getByTestId("finding-link").click();
    const form = page.getByTestId("finding-state-form");
    await form.getByLabel("Note").fill("refund amount checked with finance");
    await form.getByRole("button", { name: "Acknowledge" }).click();
    await expect(form.getByRole("status")).toContainText("acknowledged");
    await expect(page.getByTestId("finding-detail")).toContainText("refund amount checked with finance");
    await expect(page.getByTestId("findings-table")).toHaveCount(0);
    await page.goto("/reconciliation?kind=drift&state=acknowledged");
    await expect(findings).toHaveCount(1);
  });
});

test.describe("The key's verdict with the provider's side", () => {
  test.use({ colorScheme: "light" });

  test("one payment at Stripe for a clean key; two, in red, for the duplicate", async ({ page }) => {
    await loginAs(page, "viewer");
    await page.goto(`/keys?key=${encodeURIComponent(RECONCILED_EFFECTS.cleanKey)}`);
    const clean = page.getByTestId("provider-verdict");
    await expect(clean).toHaveText(
      new RegExp(`^ran once here · 1 payment at Stripe \\(${RECONCILED_EFFECTS.cleanObject}\\) · reconciled \\d+ min ago$`),
    );
    await expect(clean).toHaveAttribute("data-tone", "ok");

    await page.goto(`/keys?key=${encodeURIComponent(RECON_SEED.duplicateKey("acme"))}`);
    const dup = page.getByTestId("provider-verdict");
    await expect(dup).toContainText("ran once here · 2 payments at Stripe");
    await expect(dup).toHaveAttribute("data-tone", "danger");
    await expect(dup).toHaveClass(/text-danger/);
    await page.screenshot({ path: `${SCREENSHOT_DIR}/keys-provider-verdict.png`, fullPage: true });
    await dup.getByTestId("provider-verdict-finding").click();
    await expect(page.getByTestId("finding-comparison").getByTestId("provider-object-link")).toHaveCount(2);
  });
});

test.describe("Reconciliation, acknowledging in bulk", () => {
  test.use({ colorScheme: "light" });

  // initech's findings: no other browser test counts them (the specs run in parallel).
  test("a dry run counts the open findings the filter matches; with a note they are acknowledged in the background, each audited", async ({
    page,
  }) => {
    await loginAs(page, "platform-admin");
    await page.goto("/reconciliation?tenant=initech");
    const findings = page.getByTestId("finding-row");
    await expect(findings).toHaveCount(RECON_SEED.perTenant);
    const panel = page.getByTestId("bulk-acknowledge");
    await panel.getByRole("button", { name: "Acknowledge every open finding matching this filter…" }).click();
    const dryRun = panel.getByTestId("bulk-dry-run");
    await expect(dryRun).toContainText(`${RECON_SEED.perTenant} open findings match`);
    await expect(dryRun.locator(".bulk-sample li")).toHaveCount(RECON_SEED.perTenant);
    await expect(dryRun).toContainText("initech");
    const start = dryRun.getByRole("button", { name: `Acknowledge ${RECON_SEED.perTenant}` });
    await expect(start).toBeDisabled();
    await dryRun.getByLabel("Note").fill("initech's provider migration: checked by hand");
    await page.screenshot({ path: `${SCREENSHOT_DIR}/reconciliation-bulk-dry-run.png`, fullPage: true });
    await start.click();
    const progress = panel.getByTestId("bulk-progress");
    // The console's runner (lib/features/bulk-actions/bulk-runner.ts) picks the action up within seconds.
    await expect(progress).toHaveAttribute("data-state", "done", { timeout: 60_000 });
    await expect(progress).toContainText(
      `${RECON_SEED.perTenant} of ${RECON_SEED.perTenant} processed, ${RECON_SEED.perTenant} acknowledged`,
    );
    await expect(page.getByTestId("findings-table")).toHaveCount(0);
    await progress.getByRole("button", { name: "Done" }).click();

    await page.goto("/reconciliation?tenant=initech&state=acknowledged");
    await expect(findings).toHaveCount(RECON_SEED.perTenant);
    // Acknowledged findings are not offered again.
    await expect(page.getByTestId("bulk-acknowledge")).toHaveCount(0);
    await findings.first().getByTestId("finding-link").click();
    await expect(page.getByTestId("finding-detail")).toContainText("initech's provider migration: checked by hand");

    await page.goto("/audit?action=reconciliation.finding.acknowledge&tenant=initech");
    await expect(page.getByTestId("audit-rows").locator("tbody tr")).toHaveCount(RECON_SEED.perTenant);
  });
});
