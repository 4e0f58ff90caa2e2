import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * One date style on every page: the UI writes times only through lib/format (formatUtc and its
 * siblings), never with the browser's locale (toLocale*String, its own Intl.DateTimeFormat) or by
 * cutting an ISO string, which is how "01/12/2026, 20:08:30 UTC" came to sit beside
 * "2026-12-01 20:08:30".
 */
const ROOT = path.resolve(import.meta.dirname, "..");
const UI_DIRS = ["app", "components"];
const OWN_DATE_FORMATTING: ReadonlyArray<readonly [RegExp, string]> = [
  [/\.toLocale(Date|Time)?String\(/, "toLocale*String"],
  [/\bIntl\.DateTimeFormat\b/, "Intl.DateTimeFormat"],
  [/\.toISOString\(\)\s*\.slice\(/, "toISOString().slice"],
  [/\.replace\("T", " "\)/, 'an ISO string with its "T" replaced'],
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sources(full);
    return /\.tsx?$/.test(entry) && !/\.test\.tsx?$/.test(entry) ? [full] : [];
  });
}

describe("dates in the UI", () => {
  it("are formatted by lib/format only", () => {
    const found = UI_DIRS.flatMap((dir) => sources(path.join(ROOT, dir))).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) =>
          OWN_DATE_FORMATTING.filter(([pattern]) => pattern.test(line)).map(
            ([, what]) => `${path.relative(ROOT, file)}:${i + 1}: ${what}`,
          ),
        ),
    );
    expect(found).toEqual([]);
  });
});
