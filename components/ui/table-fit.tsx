"use client";

import { type ReactNode, useLayoutEffect, useRef } from "react";

/** The layouts a DataTable can take, widest first (app/tables.css draws each). */
const LAYOUTS = ["table", "folded", "stacked"] as const;

/** How much of the width a cut column asks for, as if its content were this many pixels wide. */
const TRUNCATE_WEIGHT = 480;

/**
 * Gives each column its share of the width as a table does: in proportion to its content's
 * widest line (measured with every column at max-content), never below its narrowest (min-content),
 * a cut column as if its content were TRUNCATE_WEIGHT px wide and never below 10rem. A grid's own
 * `auto` columns would share what is left equally: a short tenant column as wide as a long message.
 */
function measureColumns(frame: HTMLElement, table: HTMLTableElement): void {
  frame.dataset.fit = "measure";
  const heads = [...(table.tHead?.rows[0]?.cells ?? [])];
  const tracks = heads.map((th) =>
    th.dataset.kind === "truncate"
      ? `minmax(10rem, ${TRUNCATE_WEIGHT}fr)`
      : `minmax(auto, ${Math.max(1, Math.round(th.getBoundingClientRect().width))}fr)`,
  );
  frame.style.setProperty("--fit-columns", tracks.join(" "));
  frame.style.setProperty("--fit-kept-columns", tracks.filter((_, i) => heads[i]?.dataset.priority !== "3").join(" "));
}

/** A value (the text of one element in a cell) may wrap to this many lines; past it, the table folds or stacks. */
const MAX_VALUE_LINES = 4;

/** The most lines any one value in the cell takes: the distinct line tops of each element's own text. */
function tallestValue(cell: HTMLTableCellElement): number {
  const lines = new Map<Element, Set<number>>();
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const owner = node.parentElement;
    if (!owner || !node.textContent?.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const tops = lines.get(owner) ?? new Set<number>();
    for (const rect of range.getClientRects()) if (rect.width > 0) tops.add(Math.round(rect.top));
    lines.set(owner, tops);
  }
  return Math.max(0, ...[...lines.values()].map((tops) => tops.size));
}

/**
 * Whether the table, as now laid out, fits: nothing wider than its frame, and no value (a folded
 * row's own lines aside) squeezed so narrow that it wraps past MAX_VALUE_LINES lines. A cell of
 * several values (a key above its job type, a progress bar above its counts) may be taller.
 */
function fits(table: HTMLTableElement): boolean {
  if (table.scrollWidth > table.clientWidth + 1) return false;
  const folded = table.parentElement?.dataset.fit === "folded";
  for (const row of table.tBodies[0]?.rows ?? []) {
    for (const cell of row.cells) {
      if (folded && cell.dataset.priority === "3") continue;
      if (tallestValue(cell) > MAX_VALUE_LINES) return false;
    }
  }
  return true;
}

/**
 * Holds a DataTable and decides, by measuring, how it is laid out (`data-fit` on the frame): as a
 * table while every column fits; "folded" (the priority-3 columns each on a line under their row)
 * when that fits; else "stacked", each row a block of labelled values. A layout fits when nothing
 * is wider than the frame and no value wraps past MAX_VALUE_LINES lines (numbers, times and badges
 * never wrap, so they decide first). Measured again when the frame's width changes and when the
 * rows change. Before the first measurement (the server's HTML) the frame scrolls, so nothing is
 * cut meanwhile.
 */
export function TableFit({ children }: { children: ReactNode }) {
  const frame = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const element = frame.current;
    if (!element) return;
    let measuredWidth = -1;
    const layOut = () => {
      const table = element.querySelector("table");
      const width = element.clientWidth;
      if (!table || width === 0) return;
      measuredWidth = width;
      measureColumns(element, table);
      const canFold = table.querySelector('thead [data-priority="3"]') !== null;
      for (const layout of LAYOUTS) {
        if (layout === "folded" && !canFold) continue;
        element.dataset.fit = layout;
        if (layout === "stacked" || fits(table)) return;
      }
    };
    // Width changes only: a stacked table is taller than the table it was, and that must not count.
    const resized = new ResizeObserver(() => {
      if (element.clientWidth !== measuredWidth) layOut();
    });
    const changed = new MutationObserver(layOut);
    resized.observe(element);
    changed.observe(element, { childList: true, subtree: true, characterData: true });
    layOut();
    return () => {
      resized.disconnect();
      changed.disconnect();
    };
  }, []);
  return (
    <div className="table-fit" ref={frame}>
      {children}
    </div>
  );
}
