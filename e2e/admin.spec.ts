import { expect, test } from "@playwright/test";
import { KEYS_SEED } from "../lib/features/keys-and-effects/testing/seed-keys";
import { loginAs } from "./auth";
import { SCREENSHOT_DIR } from "./env";

test.use({ colorScheme: "light" });
// A shared, loaded machine: generous timeouts (tests never assert a duration).
test.describe.configure({ timeout: 90_000 });

test("an admin creates a token (its secret shown once), sees it listed without it, and revokes it", async ({ page }) => {
  await loginAs(page, "admin");
  await page.goto("/admin");
  await expect(page.getByRole("heading", { name: "Machine tokens" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Live console sessions" })).toBeVisible();
  // This browser's own session is listed: who, how, from where.
  await expect(page.getByTestId("sessions")).toContainText("token secret");

  const name = `e2e-worker-${Date.now()}`;
  const form = page.getByTestId("create-token");
  await form.getByLabel("Name").fill(name);
  await form.getByLabel("Role").selectOption("operator");
  await form.getByRole("button", { name: "Create token" }).click();
  const secret = await page.getByTestId("token-secret").textContent();
  expect(secret).toMatch(/^ob_[A-Za-z0-9_-]{43}$/);
  await page.screenshot({ path: `${SCREENSHOT_DIR}/admin-token-created.png`, fullPage: true });
  await page.getByRole("button", { name: "Done" }).click();
  await expect(page.getByTestId("token-secret")).toHaveCount(0);

  const row = page.locator("tr", { hasText: name });
  await expect(row).toContainText("operator");
  await expect(row).toContainText("active");
  await page.reload();
  await expect(page.getByRole("main")).not.toContainText(secret ?? "unreachable");

  await row.getByRole("button", { name: `Revoke token ${name}` }).click();
  await row.getByRole("button", { name: "Confirm revoke" }).click();
  await expect(row).toContainText("revoked");

  // The audit log names both changes, and the token's row links back to it.
  await page.goto(`/audit?action=token.`);
  await expect(page.getByTestId("audit-rows")).toContainText("token.create");
  await expect(page.getByTestId("audit-rows")).toContainText("token.revoke");
  await expect(page.getByTestId("audit-integrity")).toHaveAttribute("data-state", /ok|checking/);
  const csv = page.getByTestId("audit-export").getByRole("link", { name: "CSV" });
  await expect(csv).toHaveAttribute("href", /\/api\/v1\/audit\/export\?action=token\.&format=csv/);
  await page.screenshot({ path: `${SCREENSHOT_DIR}/audit-log.png`, fullPage: true });
});

test("a viewer gets no admin data: the pages say what they need, the menu leaves them out", async ({ page }) => {
  await loginAs(page, "viewer");
  await page.goto("/admin");
  await expect(page.getByRole("main")).toContainText("Tokens & sessions is for admins");
  await expect(page.getByTestId("tokens")).toHaveCount(0);
  await expect(page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Audit log" })).toHaveCount(0);
  await page.goto("/keys?q=ord-e2e-stuck");
  await expect(page.getByTestId("bulk-release")).toHaveCount(0);
});

test("an operator's dry run of a bulk release counts the stuck claims the filter matches and names them", async ({ page }) => {
  await loginAs(page, "operator");
  await page.goto("/keys?q=ord-e2e-stuck");
  const panel = page.getByTestId("bulk-release");
  await panel.getByRole("button", { name: "Release every stuck claim matching this filter…" }).click();
  const dryRun = panel.getByTestId("bulk-dry-run");
  await expect(dryRun).toBeVisible();
  // The at-most-once step is never released, so it is never counted; the capture may already have
  // been released by e2e/keys.spec.ts, in which case nothing matches.
  await expect(dryRun).not.toContainText(KEYS_SEED.stuckAtMostOnceKey);
  await expect(dryRun).toContainText(/1 stuck claim matches|No stuck claim matches this filter/);
  await page.screenshot({ path: `${SCREENSHOT_DIR}/keys-bulk-dry-run.png`, fullPage: true });
  await panel.getByRole("button", { name: "Close" }).click();
  await expect(dryRun).toHaveCount(0);
});
