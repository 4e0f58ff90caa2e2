import AxeBuilder from "@axe-core/playwright";
import type { Locator, Page } from "@playwright/test";

/**
 * What the browser itself checks on every page (e2e/phone-width.spec.ts) and on each value a
 * finding of issue 38 was about (e2e/tables.spec.ts), measured on the laid-out page:
 *
 * - the page is no wider than the window, and no text runs past its right edge;
 * - no text is cut by a box that clips (overflow hidden, clip or a sideways scroll) unless it is a
 *   deliberate ellipsis whose whole value is at hand: the title of the cut element (or of an
 *   element around it) holds the whole text, and a copy button or a link to the detail is beside it;
 * - no two pieces of text overlap (the boxes of their glyphs, from Range.getClientRects, so a
 *   padded inline box next to another is not mistaken for an overlap).
 *
 * Text read by screen readers only (clipped to a pixel on purpose), text not rendered (a closed
 * <details>) and text scrolled out of view above the page (the skip link) are left out; so are the
 * charts' drawings (SVG), whose labels the charts lay out themselves, and their hover tooltips.
 */
export function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const width = window.innerWidth;
    const root = document.documentElement;
    const named = (el: Element, text: string) => {
      const classes = el.getAttribute("class")?.trim().split(/\s+/).join(".");
      return `<${el.tagName.toLowerCase()}${classes ? `.${classes}` : ""}> "${text.replace(/\s+/g, " ").trim().slice(0, 70)}"`;
    };
    if (root.scrollWidth > width + 1) {
      // Which boxes reach past the window: the outermost of each (its parent ends inside).
      const past = [...document.body.querySelectorAll("*")].filter((el) => {
        const right = el.getBoundingClientRect().right;
        const parent = el.parentElement;
        return right > width + 1 && (!parent || parent.getBoundingClientRect().right <= width + 1);
      });
      problems.push(
        `the page is ${root.scrollWidth} px wide in a ${width} px window: ${past
          .slice(0, 5)
          .map((el) => `${named(el, el.textContent ?? "")} ends at ${Math.round(el.getBoundingClientRect().right)} px`)
          .join("; ")}`,
      );
    }

    /** The boxes that cut what overflows them, innermost first, up to the page. */
    const clippers = (el: Element): Element[] => {
      const found: Element[] = [];
      for (let at: Element | null = el; at && at !== document.body; at = at.parentElement) {
        const style = getComputedStyle(at);
        if (style.overflowX !== "visible" || style.overflowY !== "visible" || style.clip !== "auto") found.push(at);
      }
      return found;
    };
    const paddingBox = (el: Element) => {
      const r = el.getBoundingClientRect();
      const left = r.left + el.clientLeft;
      const top = r.top + el.clientTop;
      return { left, top, right: left + el.clientWidth, bottom: top + el.clientHeight };
    };
    /** A deliberate cut: an ellipsis whose whole value is a title away, with a copy button or a link beside it. */
    const wholeValueAtHand = (el: Element, cutBy: Element): boolean => {
      if (getComputedStyle(cutBy).textOverflow !== "ellipsis") return false;
      const text = (cutBy.textContent ?? "").trim();
      const titled = el.closest("[title]");
      if (!titled || !(titled.getAttribute("title") ?? "").includes(text)) return false;
      const cell = cutBy.closest("td, th, li, dd, [data-whole]") ?? cutBy.parentElement;
      return Boolean(cell?.querySelector("button.copy-button") || cutBy.closest("a[href]"));
    };

    interface TextBox {
      el: Element;
      text: string;
      rect: { left: number; top: number; right: number; bottom: number };
    }
    const boxes: TextBox[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? "";
      const el = node.parentElement;
      if (!el || !text.trim()) continue;
      if (el.closest("script, style, noscript, template, option, textarea, svg, .recharts-tooltip-wrapper, .sr-only")) continue;
      // Not rendered: hidden, or inside a closed <details> (content-visibility: hidden).
      if (!el.checkVisibility({ visibilityProperty: true, contentVisibilityAuto: true })) continue;
      if (el.closest("details:not([open]) > :not(summary)")) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0.5 && r.height > 0.5);
      if (rects.length === 0) continue;
      // Scrolled above the page (a skip link waiting for focus): not on the page.
      if (rects.every((r) => r.bottom + window.scrollY <= 0)) continue;
      const cutters = clippers(el);
      // Clipped to a pixel on purpose: for screen readers only (a stacked table's heading row).
      if (cutters.some((c) => c.clientWidth <= 1 || c.clientHeight <= 1)) continue;
      let reported = false;
      for (const raw of rects) {
        // What of the text shows: its box, less what the boxes around it cut off.
        let shown = { left: raw.left, top: raw.top, right: raw.right, bottom: raw.bottom };
        for (const cutter of cutters) {
          const box = paddingBox(cutter);
          const cut =
            raw.left < box.left - 1 || raw.right > box.right + 1 || raw.top < box.top - 1 || raw.bottom > box.bottom + 1;
          if (cut && !reported && !wholeValueAtHand(el, cutter)) {
            const scrolls = ["auto", "scroll"].includes(getComputedStyle(cutter).overflowX);
            problems.push(
              `${named(el, text)} is cut by ${named(cutter, "")}${scrolls ? " (hidden behind a sideways scroll)" : ""} with its whole value nowhere at hand`,
            );
            reported = true;
          }
          shown = {
            left: Math.max(shown.left, box.left),
            top: Math.max(shown.top, box.top),
            right: Math.min(shown.right, box.right),
            bottom: Math.min(shown.bottom, box.bottom),
          };
        }
        if (shown.right - shown.left <= 0.5 || shown.bottom - shown.top <= 0.5) continue;
        if (!reported && shown.right > width + 1) {
          problems.push(`${named(el, text)} runs past the window's right edge (${Math.round(shown.right)} > ${width} px)`);
          reported = true;
        }
        boxes.push({ el, text, rect: shown });
      }
    }

    // Overlaps: sweep the boxes top to bottom; compare each with those whose top is above its bottom.
    boxes.sort((a, b) => a.rect.top - b.rect.top);
    const seen = new Set<string>();
    for (let i = 0; i < boxes.length; i++) {
      const a = boxes[i];
      if (!a) continue;
      for (let j = i + 1; j < boxes.length; j++) {
        const b = boxes[j];
        if (!b || b.rect.top >= a.rect.bottom - 2) break;
        if (a.el === b.el) continue;
        const across = Math.min(a.rect.right, b.rect.right) - Math.max(a.rect.left, b.rect.left);
        const down = Math.min(a.rect.bottom, b.rect.bottom) - Math.max(a.rect.top, b.rect.top);
        if (across <= 2 || down <= 2) continue;
        const line = `${named(a.el, a.text)} overlaps ${named(b.el, b.text)}`;
        if (!seen.has(line)) problems.push(line);
        seen.add(line);
      }
    }
    return problems;
  });
}

/**
 * Whether a piece of text is shown whole: every line of it inside the window and inside every box
 * that clips it (a sideways scroll included). Returns what is wrong, or null.
 */
export function textCutOf(locator: Locator): Promise<string | null> {
  return locator.evaluate((el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const rects = [...range.getClientRects()].filter((r) => r.width > 0.5 && r.height > 0.5);
    const text = (el.textContent ?? "").trim();
    if (rects.length === 0) return `"${text}" is not laid out`;
    for (const rect of rects) {
      if (rect.left < -1 || rect.right > window.innerWidth + 1) return `"${text}" runs out of the ${window.innerWidth} px window`;
      for (let at: Element | null = el; at && at !== document.body; at = at.parentElement) {
        const style = getComputedStyle(at);
        if (style.overflowX === "visible" && style.overflowY === "visible") continue;
        const r = at.getBoundingClientRect();
        const left = r.left + at.clientLeft;
        const right = left + at.clientWidth;
        if (rect.left < left - 1 || rect.right > right + 1)
          return `"${text}" is cut by <${at.tagName.toLowerCase()} class="${at.getAttribute("class") ?? ""}"> (${Math.round(rect.right)} > ${Math.round(right)} px)`;
      }
    }
    return null;
  });
}

/** The serious and critical WCAG 2.1 A/AA violations axe finds on the page, one line each. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}; ${v.nodes.length} element(s), e.g. ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(" "))
          .join(" | ")}`,
    );
}
