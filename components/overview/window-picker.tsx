"use client";

import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { OVERVIEW_WINDOWS, type OverviewWindow } from "@/lib/console/overview-types";

const SHORT: Record<OverviewWindow, string> = { "1h": "1h", "24h": "24h", "7d": "7d" };
const LONG: Record<OverviewWindow, string> = { "1h": "last hour", "24h": "last 24 hours", "7d": "last 7 days" };

/** The time window as links (?window=…): deep-linkable, back-button friendly, keyboard reachable. */
export function WindowPicker({ value }: { value: OverviewWindow }) {
  const searchParams = useSearchParams();
  return (
    <nav className="segmented" aria-label="Time window">
      {OVERVIEW_WINDOWS.map((window) => {
        const params = new URLSearchParams(searchParams.toString());
        params.set("window", window);
        return (
          <Link
            key={window}
            href={`?${params.toString()}`}
            replace
            scroll={false}
            aria-current={window === value ? "true" : undefined}
            aria-label={LONG[window]}
            className="segment"
          >
            {SHORT[window]}
          </Link>
        );
      })}
    </nav>
  );
}
