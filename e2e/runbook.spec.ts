import { expect, test } from "@playwright/test";
import { loginAs } from "./auth";

// An alert's runbook is rendered from its Markdown: code as code, the pages it names as links.
test.use({ colorScheme: "light" });

test("a runbook shows `constraint` as code and links the pages it names", async ({ page }) => {
  await loginAs(page, "viewer");
  await page.goto("/overview/runbook/OnceboardUncaughtUniqueViolation");
  const runbook = page.getByTestId("runbook");
  await expect(runbook.locator("code", { hasText: /^constraint$/ })).toBeVisible();
  expect(await runbook.textContent()).not.toContain("`");
  await expect(runbook.getByRole("link", { name: "Keys", exact: true })).toHaveAttribute("href", "/keys");
  await runbook.getByRole("link", { name: "Violations", exact: true }).click();
  await expect(page).toHaveURL(/\/violations$/);
  await expect(page.getByRole("heading", { name: "Violations", level: 1 })).toBeVisible();
});
