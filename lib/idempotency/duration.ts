import { InvalidEffectsOptionsError } from "./errors";

/** A duration: milliseconds as a number, or "500ms", "30s", "10m", "12h", "7d". */
export type Duration = number | `${number}${"ms" | "s" | "m" | "h" | "d"}`;

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export function toMs(value: Duration, name: string): number {
  if (typeof value === "number") {
    if (Number.isFinite(value) && value >= 0) return value;
  } else if (typeof value === "string") {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim());
    if (match) return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }
  throw new InvalidEffectsOptionsError(
    `${name} must be milliseconds or a duration like "30s", "10m", "7d"; got ${typeof value === "string" || typeof value === "number" ? String(value) : typeof value}`,
    { field: name },
  );
}
