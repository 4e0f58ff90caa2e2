import { expect, test } from "@playwright/test";
import { KEYS_SEED } from "../lib/features/keys-and-effects/testing/seed-keys";
import { loginAs } from "./auth";
import { CONSOLE_PAGES, contrastOf, settle } from "./pages";

/** WCAG AA for normal-size text. */
const AA_CONTRAST = 4.5;

test.describe("in the dark theme", () => {
  test.use({ colorScheme: "dark" });

  test("the Overview's range buttons, Custom included, are readable (WCAG AA)", async ({ page }) => {
    await loginAs(page, "viewer");
    await page.goto("/overview");
    const custom = page.getByRole("button", { name: "Custom", exact: true });
    await expect(custom).toBeVisible();
    expect(await contrastOf(page, 'button.segment:text-is("Custom")')).toBeGreaterThanOrEqual(AA_CONTRAST);
    await custom.click();
    await expect(custom).toHaveAttribute("aria-pressed", "true");
    expect(await contrastOf(page, 'button.segment:text-is("Custom")')).toBeGreaterThanOrEqual(AA_CONTRAST);
    expect(await contrastOf(page, '.segment[aria-current="true"]')).toBeGreaterThanOrEqual(AA_CONTRAST);
  });
});

test("the sign-in page shows commands as code, not Markdown backticks", async ({ page }) => {
  // A refused login link says how to get another, as code too.
  await page.goto("/login#code=not-a-real-code");
  const main = page.getByRole("main");
  await expect(main.getByRole("alert")).toContainText("npm run token -- link");
  await expect(main.locator("code", { hasText: "npm run token -- link" })).toBeVisible();
  await expect(main.locator("code", { hasText: "npm run token -- create" })).toBeVisible();
  expect(await main.innerText()).not.toContain("`");
});

/**
 * A date written in a browser's locale style, not lib/format's "2026-12-01 20:08(:30) UTC"
 * (lib/format-usage.test.ts checks the code). ISO strings are not caught here: the library's
 * maintenance plan (lib/idempotency) writes them in the reasons the Retention page quotes.
 */
const FOREIGN_DATE = /\b\d{1,2}\/\d{1,2}\/\d{2,4}\b|\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b/;

test("every page writes dates one way: 2026-12-01 20:08:30 UTC", async ({ page }) => {
  test.setTimeout(120_000);
  await loginAs(page, "platform-admin");
  for (const target of CONSOLE_PAGES.filter((p) => p.signedIn)) {
    await page.goto(target.path);
    await settle(page);
    const text = await page.getByRole("main").innerText();
    expect(text.match(FOREIGN_DATE)?.[0], `${target.path}: a date in another style`).toBeUndefined();
  }
  // The Overview's range line says its zone once, in lib/format's style.
  await page.goto("/overview");
  await expect(page.getByRole("main")).toContainText(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC – \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
});

test("counts of one are singular: 1 key, not 1 keys", async ({ page }) => {
  await loginAs(page, "viewer");
  await page.goto(`/keys?q=${encodeURIComponent(KEYS_SEED.stuckKey)}`);
  await expect(page.getByTestId("key-row")).toHaveCount(1);
  // The row can be in the page (the table measuring its fit) before the results' count is drawn:
  // wait for the count itself, then read the page once.
  const main = page.getByRole("main");
  await expect(main).toContainText(/\b1 key\b/, { useInnerText: true });
  expect(await main.innerText()).not.toMatch(/\b1 keys\b/);
});
