import { expect, test } from "@playwright/test";
import { loginToFilled } from "./auth";
import { FILLED_URL } from "./env";
import { accessibilityViolations, layoutProblems } from "./layout";
import { CONSOLE_VIEWS, settle } from "./pages";

/**
 * Every page, and every state of a page that shows another table, at phone width (390 px) and
 * desktop width (1440 px), light and dark, on the filled console (every table past a page of rows,
 * long names, big numbers: test/console-fill.ts): nothing wider than the window, no text cut
 * without its whole value at hand, no two texts overlapping (e2e/layout.ts), and no serious or
 * critical accessibility violation (axe). Each view is kept as a screenshot in docs/screenshots/
 * (<view>-<width>-<theme>.png), so a change in looks shows in review: SCREENSHOT_SCREENS screens
 * from the top, or from what the view is about (a page of 100 filled rows is 20,000 px tall; the
 * checks read all of it, the picture need not).
 *
 * One browser context per width and theme, signed in once, walks every view; a failing view is
 * reported (a soft expectation) and the walk goes on, so one run names every problem.
 */
const WIDTHS = [
  { width: 390, height: 844 },
  { width: 1440, height: 900 },
] as const;
const THEMES = ["light", "dark"] as const;
const SCREENSHOT_SCREENS = 5;

for (const viewport of WIDTHS) {
  for (const colorScheme of THEMES) {
    const variant = `${viewport.width}-${colorScheme}`;
    test(`every page at ${viewport.width} px (${colorScheme}): nothing cut, overlapping or too wide; no serious accessibility violation`, async ({
      browser,
    }) => {
      test.setTimeout(20 * 60_000);
      const signedIn = await browser.newContext({ viewport, colorScheme, baseURL: FILLED_URL });
      const signedOut = await browser.newContext({ viewport, colorScheme, baseURL: FILLED_URL });
      try {
        const page = await signedIn.newPage();
        await loginToFilled(page, "platform-admin");
        const outside = await signedOut.newPage();
        for (const view of CONSOLE_VIEWS) {
          await test.step(view.name, async () => {
            const at = view.signedIn ? page : outside;
            await at.goto(view.path);
            await settle(at);
            if (view.open) {
              await view.open(at, variant);
              await settle(at);
            }
            // Taken first, so a view that fails is kept too and shows what is wrong.
            // From the top of the page, or of what the view is about; the sticky sidebar where it
            // sits with the page scrolled to the top.
            await at.evaluate(() => window.scrollTo(0, 0));
            const height = await at.evaluate(() => document.documentElement.scrollHeight);
            const top = view.focus ? Math.max(0, ((await view.focus(at).boundingBox())?.y ?? 0) - 16) : 0;
            await at.screenshot({
              path: `docs/screenshots/${view.name}-${variant}.png`,
              fullPage: true,
              clip: { x: 0, y: top, width: viewport.width, height: Math.min(height - top, viewport.height * SCREENSHOT_SCREENS) },
            });
            const where = `${view.name} (${view.path}) at ${viewport.width} px, ${colorScheme}`;
            expect.soft(await layoutProblems(at), `${where}: layout`).toEqual([]);
            expect.soft(await accessibilityViolations(at), `${where}: accessibility`).toEqual([]);
          });
        }
      } finally {
        await signedIn.close();
        await signedOut.close();
      }
    });
  }
}
