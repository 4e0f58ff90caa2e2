import { expect, type Locator, type Page, test } from "@playwright/test";
import { FILL } from "../test/console-fill";
import { loginToFilled } from "./auth";
import { FILLED_URL } from "./env";
import { textCutOf } from "./layout";
import { settle } from "./pages";

/**
 * Each value issue 38 found cut or hidden on a console with real data (../shared/screens/2026-12-03/),
 * checked on the filled console (test/console-fill.ts): at 1440 px the Keys results, a drift
 * finding's amounts, the Violations' message ids, the runs' findings and the revoke buttons; at
 * 390 px the alert names, the Job types' Uncaught column, the workers' uptime and restarts and the
 * Violations' tenant. Every value must be shown whole: inside the window and inside every box that
 * clips it (a sideways scroll included).
 */
test.use({ baseURL: FILLED_URL, colorScheme: "light" });

async function expectWhole(values: Locator, what: string): Promise<void> {
  const count = await values.count();
  expect(count, `${what}: none on the page`).toBeGreaterThan(0);
  for (let i = 0; i < count; i++) expect(await textCutOf(values.nth(i)), `${what} #${i + 1}`).toBeNull();
}

async function open(page: Page, path: string): Promise<void> {
  await loginToFilled(page, "platform-admin");
  await page.goto(path);
  await settle(page);
}

test.describe("at 1440 px", () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test("Keys: the results take the page's width and show each key's Created (UTC) whole", async ({ page }) => {
    await open(page, "/keys");
    const rows = page.getByTestId("key-row");
    await expect(rows.first()).toBeVisible();
    const [results, search] = [
      await page.locator("section.keys-results").boundingBox(),
      await page.getByRole("search", { name: "Search keys" }).boundingBox(),
    ];
    // No key is open: nothing stands beside the results, so they are as wide as the search above them.
    expect(results?.width ?? 0).toBeGreaterThan((search?.width ?? 0) - 2);
    await expectWhole(rows.locator("td:last-child"), "Created (UTC)");
  });

  test("a drift finding's provider side shows its amounts whole: 17139 and 6054, not 171 and 605", async ({ page }) => {
    const { ours, theirs } = FILL.drift;
    await open(page, `/reconciliation?kind=drift&tenant=${encodeURIComponent(FILL.tenant)}`);
    await page.getByRole("link", { name: `amount differs: ${ours} recorded, ${theirs[1]} at the provider` }).click();
    // The provider's side: its own table before issue 38 ("17139 usd"), the finding's comparison after.
    const side = page.locator('[data-testid="finding-theirs"], [data-testid="finding-comparison"]');
    await expect(side).toBeVisible();
    for (const amount of theirs) await expectWhole(side.getByText(new RegExp(`^${amount}( usd)?$`)), `amount ${amount}`);
  });

  test("Violations show each message id whole", async ({ page }) => {
    await open(page, "/violations");
    await expectWhole(page.getByTestId("violation-row").locator("code", { hasText: "projects/northwind-prod/" }), "message id");
  });

  test("Reconciliation's runs show what each found, whole", async ({ page }) => {
    await open(page, "/reconciliation");
    // A run's row in the runs table before issue 38, its window's latest run after.
    const found = page.locator('[data-testid="run-row"] td, [data-testid="run-window"] .run-found');
    await expectWhole(found.filter({ hasText: "duplicated at provider" }), "a run's findings");
  });

  test("Tokens & sessions: Revoke, then Confirm revoke and Cancel, stay in view in the table", async ({ page }) => {
    await open(page, "/admin");
    const tokens = page.getByTestId("tokens");
    await expectWhole(tokens.getByRole("button", { name: /^Revoke token/ }).first(), "Revoke…");
    await tokens
      .getByRole("button", { name: /^Revoke token/ })
      .first()
      .click();
    await expectWhole(tokens.getByRole("button", { name: "Confirm revoke" }), "Confirm revoke");
    await expectWhole(tokens.getByRole("button", { name: "Cancel" }), "Cancel");
  });
});

test.describe("at 390 px", () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test("alert names break between their words, never inside one", async ({ page }) => {
    await open(page, "/overview");
    const names = page.getByTestId("alert").locator("strong");
    await expect(names.first()).toBeVisible();
    // Where each line of a name starts: the characters whose box sits lower than the one before.
    const lines = await names.evaluateAll((elements) =>
      elements.map((el) => {
        const starts: string[] = [];
        const text = el.textContent ?? "";
        let offset = 0;
        let lastTop: number | null = null;
        for (const node of [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE)) {
          for (let i = 0; i < (node.textContent ?? "").length; i++) {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const top = range.getBoundingClientRect().top;
            if (lastTop !== null && top > lastTop + 2) starts.push(`${text.slice(0, offset + i)}|${text.slice(offset + i)}`);
            lastTop = top;
          }
          offset += (node.textContent ?? "").length;
        }
        return starts;
      }),
    );
    const breaks = lines.flat();
    // The names are longer than the phone's line: some do break, so where they break is tested.
    expect(breaks.length).toBeGreaterThan(0);
    for (const at of breaks) expect(at, "a line starts with a word's capital").toMatch(/[a-z0-9]\|[A-Z]/);
  });

  test("the Job types' Uncaught column and the workers' uptime and restarts are in view, not behind a sideways scroll", async ({
    page,
  }) => {
    await open(page, "/overview");
    await expectWhole(page.getByTestId("job-type-row").locator("td:last-child"), "Uncaught");
    await expectWhole(page.getByTestId("worker-uptime"), "uptime");
    await expectWhole(page.getByTestId("worker-restarts"), "restarts");
  });

  test("the Violations' tenant is in view, not behind a sideways scroll", async ({ page }) => {
    await open(page, "/violations");
    await expectWhole(page.getByTestId("violation-row").locator("td", { hasText: FILL.tenant }), "tenant");
  });
});
