import { expect, type Page, test } from "@playwright/test";
import { STATES_SEED } from "../lib/features/keys-and-effects/testing/seed-states";
import { E2E_TENANT, loginAs } from "./auth";
import { SCREENSHOT_DIR } from "./env";

test.use({ colorScheme: "light" });
// A shared, loaded machine: generous timeouts (tests never assert a duration).
test.describe.configure({ timeout: 90_000 });

/** The count beside a state in the sidebar. */
const countOf = async (page: Page, state: string) =>
  Number(
    (
      (await page.locator(`[data-testid="state-link"][data-state="${state}"] [data-testid="state-count"]`).textContent()) ?? ""
    ).replaceAll(",", ""),
  );

test("a tenant's viewer browses by state: each count heads a list of that many rows, a failed step with its error and attempts", async ({
  page,
}) => {
  await loginAs(page, "viewer");
  await page.goto("/states");
  // The failed list by default, marked in the sidebar.
  const failed = page.locator('[data-testid="state-link"][data-state="failed"]');
  await expect(failed).toHaveAttribute("aria-current", "page");
  const list = page.getByTestId("state-list");
  await expect(list.getByRole("heading", { name: /^Failed/ })).toBeVisible();
  await expect(list).toContainText(`Tenant ${E2E_TENANT}`);
  const row = page.getByTestId("state-row").filter({ hasText: STATES_SEED.failedKey(E2E_TENANT) });
  await expect(row.getByTestId("effect-error")).toHaveText(STATES_SEED.failedErrorShown);
  await expect(row.getByTestId("state-attempts")).toHaveText(String(STATES_SEED.failedAttempts));
  // Another tenant's failed effect is never shown, not even as a count.
  await expect(page.getByRole("main")).not.toContainText("st-globex");

  // Every state: the sidebar's count, the list's heading and the rows shown agree (each under a page).
  let total = 0;
  for (const state of ["in_progress", "stuck", "failed", "abandoned", "completed"]) {
    await page.locator(`[data-testid="state-link"][data-state="${state}"]`).click();
    await expect(page).toHaveURL(new RegExp(`state=${state}`));
    await expect(page.locator(`[data-testid="state-link"][data-state="${state}"]`)).toHaveAttribute("aria-current", "page");
    const count = await countOf(page, state);
    await expect(page.getByTestId("state-list-count")).toHaveText(String(count));
    await expect(page.getByTestId("state-row")).toHaveCount(count);
    total += count;
  }
  await expect(page.getByTestId("states-total")).toHaveText(`${total} effects in all`);
  await page.screenshot({ path: `${SCREENSHOT_DIR}/states-1440-light.png`, fullPage: true });

  // The refused deliveries of key reuse: each message, and its key opens on the Keys page.
  await page.locator('[data-testid="state-link"][data-state="key_reuse"]').click();
  await expect(page).toHaveURL(/state=key_reuse/);
  await expect(page.getByTestId("key-reuse-record")).toContainText("delivery timeline");
  const refusals = page.getByTestId("state-row");
  await expect(refusals).toHaveCount(await countOf(page, "key_reuse"));
  for (const messageId of STATES_SEED.reusedMessageIds(E2E_TENANT))
    await expect(refusals.filter({ hasText: messageId })).toHaveCount(1);
  await refusals.first().getByTestId("state-key").click();
  await expect(page).toHaveURL(/\/keys\?/);
  await expect(page.getByTestId("key-detail")).toBeVisible();
  await expect(page.getByTestId("key-detail")).toContainText(STATES_SEED.completedKey(E2E_TENANT));
});

test("a platform admin is told to pick a tenant for bulk release, on the stuck list and on the Keys page, and reaches it once one is named", async ({
  page,
}) => {
  await loginAs(page, "platform-admin");
  await page.goto("/keys");
  await expect(page.getByTestId("bulk-release")).toHaveCount(0);
  await expect(page.getByTestId("bulk-release-hint")).toContainText("name a tenant");

  // The Keys seed's stuck claims are ten days old: a tenant's 90 days hold them, every tenant's 7 do not.
  await page.goto("/states?state=stuck");
  await expect(page.getByTestId("state-list")).toContainText("Every tenant");
  const form = page.getByTestId("state-filters");
  await form.getByLabel("Tenant").fill(E2E_TENANT);
  await form.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(new RegExp(`state=stuck&tenant=${E2E_TENANT}`));
  const stuck = await countOf(page, "stuck");
  expect(stuck).toBeGreaterThan(0);
  await expect(page.getByTestId("state-row")).toHaveCount(stuck);
  await expect(page.getByTestId("bulk-release-hint")).toHaveCount(0);
  await page.getByTestId("bulk-release-link").click();
  await expect(page).toHaveURL(new RegExp(`/keys\\?tenant=${E2E_TENANT}`));
  await expect(page.getByTestId("bulk-release")).toBeVisible();
});

test("the Overview's stuck claims link the stuck list, and a bad state is a 400 beside the form", async ({ page }) => {
  await loginAs(page, "platform-admin");
  await page.goto("/overview");
  await page.getByTestId("stuck-browse").click();
  await expect(page).toHaveURL(/\/states\?state=stuck/);
  await expect(page.locator('[data-testid="state-link"][data-state="stuck"]')).toHaveAttribute("aria-current", "page");

  const response = await page.goto("/states?state=bogus&jobType=charge-card");
  expect(response?.status()).toBe(400);
  await expect(page.getByTestId("invalid-query")).toContainText("state");
  await expect(page.getByTestId("state-filters").getByLabel("Job type")).toHaveValue("charge-card");
  await expect(page.getByTestId("state-list")).toHaveCount(0);
});
