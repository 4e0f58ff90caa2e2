"use client";

import { type ReactNode, useLayoutEffect, useRef } from "react";

/** The layouts a DataTable can take, widest first (app/tables.css draws each). */
const LAYOUTS = ["table", "folded", "stacked"] as const;

/**
 * Holds a DataTable and decides, by measuring, how it is laid out (`data-fit` on the frame): as a
 * table while every column fits; "folded" (the priority-3 columns each on a line under their row)
 * when that fits; else "stacked", each row a block of labelled values. Numbers, times and ids never
 * wrap in a table, so it is they that decide. Measured again when the frame's width changes and
 * when the rows change. Before the first measurement (the server's HTML) the frame scrolls, so
 * nothing is cut meanwhile.
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
      const canFold = table.querySelector('thead [data-priority="3"]') !== null;
      for (const layout of LAYOUTS) {
        if (layout === "folded" && !canFold) continue;
        element.dataset.fit = layout;
        // A grid whose columns need more than its width overflows it: scrollWidth says by how much.
        if (layout === "stacked" || table.scrollWidth <= table.clientWidth + 1) return;
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
