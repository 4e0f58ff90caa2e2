import { expect, test } from "@playwright/test";
import { loginAs } from "./auth";
import { CONSOLE_PAGES, overflowsOf, settle } from "./pages";

/**
 * Every page at phone width (390 px) and desktop width (1440 px), light and dark: at 390 px nothing
 * is wider than the screen or cut off inside its box, and each view is kept as a screenshot in
 * docs/screenshots/ (<page>-<width>-<theme>.png), so a change in looks shows in review.
 */
test.describe.configure({ timeout: 120_000 });

const WIDTHS = [
  { width: 390, height: 844 },
  { width: 1440, height: 900 },
] as const;
const THEMES = ["light", "dark"] as const;

for (const target of CONSOLE_PAGES) {
  test(`${target.name} fits a phone and is kept as screenshots`, async ({ browser }) => {
    for (const viewport of WIDTHS) {
      for (const colorScheme of THEMES) {
        const context = await browser.newContext({ viewport, colorScheme });
        const page = await context.newPage();
        if (target.signedIn) await loginAs(page, "platform-admin");
        await page.goto(target.path);
        await settle(page);
        // Taken first, so a page that does not fit is kept too and shows what is wrong.
        await page.screenshot({
          path: `docs/screenshots/${target.name}-${viewport.width}-${colorScheme}.png`,
          fullPage: true,
        });
        if (viewport.width === 390) {
          expect(await overflowsOf(page), `${target.path} at 390 px (${colorScheme})`).toEqual([]);
        }
        await context.close();
      }
    }
  });
}
