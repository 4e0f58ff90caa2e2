import { expect, test } from "@playwright/test";
import { RECON_SEED, RECONCILED_EFFECTS } from "../lib/features/reconciliation/testing/seed-reconciliation";
import { loginAs } from "./auth";
import { SCREENSHOT_DIR } from "./env";
import { overflowsOf, settle } from "./pages";

// A shared, loaded machine: generous timeouts (tests never assert a duration).
test.describe.configure({ timeout: 90_000 });

// The seed (lib/features/reconciliation/testing/seed-reconciliation.ts): a completed, a running and a failed run;
// per tenant a duplicate at Stripe, a missing payment and a drift; one object naming no tenant.
for (const colorScheme of ["light", "dark"] as const) {
  test.describe(`Reconciliation, ${colorScheme} theme`, () => {
    test.use({ colorScheme });

    test("runs with progress, the tenant's open findings, a finding's two sides", async ({ page }) => {
      await loginAs(page, "viewer");
      await page.goto("/reconciliation");
      await expect(page.getByRole("heading", { name: "Reconciliation", level: 1 })).toBeVisible();
      const runs = page.getByTestId("run-row");
      await expect(runs).toHaveCount(3);
      await expect(page.getByTestId("runs-table").locator('[data-status="running"]').getByTestId("run-progress")).toBeVisible();
      const findings = page.getByTestId("finding-row");
      await expect(findings).toHaveCount(RECON_SEED.perTenant);
      await expect(page.getByTestId("findings-table")).not.toContainText("globex");
      await expect(page.getByTestId("findings-table")).not.toContainText("none named");

      await page.getByTestId("finding-filters").getByLabel("Kind").selectOption("duplicated_at_provider");
      await page.getByTestId("finding-filters").getByRole("button", { name: "Apply" }).click();
      await expect(page).toHaveURL(/kind=duplicated_at_provider/);
      await expect(findings).toHaveCount(1);
      await findings.first().getByTestId("finding-link").click();
      await expect(page).toHaveURL(/finding=\d+/);
      const ours = page.getByTestId("finding-ours");
      const theirs = page.getByTestId("finding-theirs");
      await expect(ours).toContainText(RECON_SEED.duplicateKey("acme"));
      await expect(ours).toContainText("completed");
      await expect(ours).not.toContainText(RECON_SEED.outcomeSecret("acme"));
      await expect(theirs.getByTestId("their-object")).toHaveCount(2);
      for (const id of RECON_SEED.duplicateObjects("acme")) await expect(theirs).toContainText(id);
      // Side by side at this width: the two panels share one row.
      const [a, b] = [await ours.boundingBox(), await theirs.boundingBox()];
      expect(a && b && Math.abs(a.y - b.y) < 2 && a.x < b.x).toBe(true);
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

test.describe("Reconciliation at phone width", () => {
  for (const colorScheme of ["light", "dark"] as const) {
    test(`a finding opened at 390 px fits the screen, its two sides one under the other (${colorScheme})`, async ({
      browser,
    }) => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme });
      const page = await context.newPage();
      await loginAs(page, "operator");
      await page.goto("/reconciliation?kind=duplicated_at_provider");
      await page.getByTestId("finding-row").first().getByTestId("finding-link").click();
      await expect(page.getByTestId("finding-theirs").getByTestId("their-object")).toHaveCount(2);
      await settle(page);
      await page.screenshot({ path: `docs/screenshots/reconciliation-finding-390-${colorScheme}.png`, fullPage: true });
      expect(await overflowsOf(page)).toEqual([]);
      const [a, b] = [
        await page.getByTestId("finding-ours").boundingBox(),
        await page.getByTestId("finding-theirs").boundingBox(),
      ];
      expect(a && b && b.y >= a.y + a.height).toBe(true);
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
    await expect(page.getByTestId("finding-theirs").getByTestId("their-object")).toHaveCount(2);
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
