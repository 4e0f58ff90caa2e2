import { expect, type Locator, type Page } from "@playwright/test";
import { NAV_ITEMS } from "../components/shell/nav-items";
import { KEYS_SEED } from "../lib/features/keys-and-effects/testing/seed-keys";
import { ALERT_RULES } from "../lib/features/overview/metrics/alert-rules";
import { FILL } from "../test/console-fill";
import { E2E_TENANT } from "./roles";

/** A page the looks checks visit: its screenshot name, its address, and whether it needs a session. */
export interface ConsolePage {
  name: string;
  path: string;
  signedIn: boolean;
}

/**
 * Every page of the console: the navigation's pages (so a page added to NAV_ITEMS is checked
 * without editing this file), a key's detail, a runbook page, and the sign-in page.
 */
export const CONSOLE_PAGES: ConsolePage[] = [
  ...NAV_ITEMS.map((item) => ({ name: item.href.slice(1), path: item.href, signedIn: true })),
  {
    name: "keys-detail",
    path: `/keys?tenant=${E2E_TENANT}&q=${KEYS_SEED.orderId}&key=${encodeURIComponent(`capture:${KEYS_SEED.orderId}`)}`,
    signedIn: true,
  },
  ...ALERT_RULES.slice(0, 1).map((rule) => ({ name: "runbook", path: `/overview/runbook/${rule.name}`, signedIn: true })),
  { name: "login", path: "/login", signedIn: false },
];

/**
 * A page in a state a reader puts it in (a finding opened, a revoke asked for, a bulk release
 * run), on the filled console (test/console-fill.ts): `open` gets it there from `path`; `variant`
 * names the width and theme it is done at (a bulk release takes its own set of stuck claims).
 */
export interface ConsoleView extends ConsolePage {
  open?: (page: Page, variant: string) => Promise<void>;
  /** What the view is about, where its screenshot starts (default: the top of the page). */
  focus?: (page: Page) => Locator;
}

/** Every page, then the states of pages whose tables only show once a reader acts. */
export const CONSOLE_VIEWS: ConsoleView[] = [
  ...CONSOLE_PAGES,
  {
    name: "reconciliation-drift-finding",
    path: `/reconciliation?kind=drift&tenant=${encodeURIComponent(FILL.tenant)}`,
    signedIn: true,
    open: async (page) => {
      const { ours, theirs } = FILL.drift;
      await page.getByRole("link", { name: `amount differs: ${ours} recorded, ${theirs[1]} at the provider` }).click();
      await expect(page.getByTestId("finding-comparison").getByTestId("theirs-object")).toHaveCount(theirs.length);
    },
    focus: (page) => page.getByTestId("finding-detail"),
  },
  {
    name: "admin-revoke-confirm",
    path: "/admin",
    signedIn: true,
    open: async (page) => {
      await page
        .getByTestId("tokens")
        .getByRole("button", { name: /^Revoke token/ })
        .first()
        .click();
      await expect(page.getByTestId("tokens").getByRole("button", { name: "Confirm revoke" })).toBeVisible();
    },
    focus: (page) => page.getByTestId("tokens"),
  },
  {
    name: "keys-bulk-release",
    path: `/keys?tenant=${encodeURIComponent(FILL.tenant)}`,
    signedIn: true,
    open: async (page, variant) => {
      await page.goto(`/keys?tenant=${encodeURIComponent(FILL.tenant)}&q=${FILL.bulkPrefix(variant)}`);
      const panel = page.getByTestId("bulk-release");
      await panel.getByRole("button", { name: /^Release every stuck claim/ }).click();
      await panel.getByRole("button", { name: `Release ${FILL.bulkClaims}` }).click();
      // The console's runner releases them within seconds; the items table stays.
      await expect(panel.getByTestId("bulk-progress").getByRole("button", { name: "Done" })).toBeVisible({ timeout: 60_000 });
      await expect(panel.getByTestId("bulk-items").locator("tbody tr")).not.toHaveCount(0);
    },
    focus: (page) => page.getByTestId("bulk-release"),
  },
];

/** Waits until a page shows its data: no skeleton, nothing busy, every chart drawn. */
export async function settle(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle").catch(() => undefined);
  const main = page.getByRole("main");
  await expect(main.locator(".skeleton")).toHaveCount(0, { timeout: 60_000 });
  await expect(main.locator('[aria-busy="true"]')).toHaveCount(0, { timeout: 60_000 });
  await expect(main.locator('[data-mounted="no"]')).toHaveCount(0, { timeout: 60_000 });
}

/**
 * What does not fit at the current width, described for a failure message: the page scrolling
 * sideways, or an element whose content is wider than its box and neither scrolls nor ends in an
 * ellipsis (it spills over its neighbours or is cut off). e2e/layout.ts's layoutProblems is the
 * stricter check: a scroll that hides text fails it too.
 */
export function overflowsOf(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > window.innerWidth + 1)
      found.push(`the page is ${root.scrollWidth} px wide in a ${window.innerWidth} px window`);
    const label = (el: Element) => {
      const classes = el.getAttribute("class") ? `.${el.getAttribute("class")?.trim().split(/\s+/).join(".")}` : "";
      const text = (el.textContent ?? "").trim().replace(/\s+/g, " ").slice(0, 60);
      return `<${el.tagName.toLowerCase()}${classes}> "${text}"`;
    };
    for (const el of document.body.querySelectorAll("*")) {
      if (!(el instanceof HTMLElement)) continue;
      // Drawings and form controls size themselves; a screen-reader-only text is clipped on purpose.
      if (el.closest("svg, .recharts-wrapper, .sr-only") || el.matches("input, select, textarea, script, style, option"))
        continue;
      const style = getComputedStyle(el);
      if (style.display === "inline" || style.display === "none" || style.display === "contents") continue;
      if (style.overflowX === "auto" || style.overflowX === "scroll" || style.textOverflow === "ellipsis") continue;
      if (el.clientWidth <= 1) continue;
      if (el.scrollWidth > el.clientWidth + 1)
        found.push(`${label(el)}: content ${el.scrollWidth} px in a ${el.clientWidth} px box`);
    }
    return found;
  });
}

/** The WCAG contrast ratio of an element's text against what is painted behind it (alpha composited). */
export function contrastOf(page: Page, selector: string): Promise<number> {
  return page.locator(selector).evaluate((target) => {
    type Rgba = [number, number, number, number];
    const parse = (value: string): Rgba => {
      const [r = 0, g = 0, b = 0, a = 1] = value.match(/[\d.]+/g)?.map(Number) ?? [0, 0, 0, 0];
      return [r, g, b, a];
    };
    const over = (top: Rgba, bottom: Rgba): Rgba => {
      const a = top[3] + bottom[3] * (1 - top[3]);
      if (a === 0) return [0, 0, 0, 0];
      const mix = (t: number, b: number) => (t * top[3] + b * bottom[3] * (1 - top[3])) / a;
      return [mix(top[0], bottom[0]), mix(top[1], bottom[1]), mix(top[2], bottom[2]), a];
    };
    const backdrop = (el: Element | null): Rgba => {
      if (!el) return [255, 255, 255, 1];
      const own = parse(getComputedStyle(el).backgroundColor);
      return own[3] >= 1 ? own : over(own, backdrop(el.parentElement));
    };
    const luminance = ([r, g, b]: Rgba) => {
      const channel = (c: number) => {
        const s = c / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    const background = backdrop(target);
    const text = over(parse(getComputedStyle(target).color), background);
    const [a, b] = [luminance(text), luminance(background)];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  });
}
