import { describe, expect, it } from "vitest";
import { ApiError } from "./api/errors";
import { parseSearchParams } from "./api/parse";
import { auditQuery } from "./features/audit/contract";
import { effectSearchQuery } from "./features/keys-and-effects/contract";
import { overviewQuery } from "./features/overview/contract";
import { adviceQuery } from "./features/retention-and-gaps/contract";
import { parseGapsQuery } from "./features/retention-and-gaps/gaps-query";
import { bigintId, isoTime, safeText } from "./fields";

/** The 400 a query gets, or undefined when it parses. */
function refusal(parse: () => unknown): ApiError | undefined {
  try {
    parse();
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

describe("the shared field refinements", () => {
  it("safeText refuses NUL, control characters and lone surrogates, and keeps the rest", () => {
    const text = safeText(50);
    for (const bad of ["a\u0000b", "tab\there", "line\nbreak", "del\u007f", "half \ud800 pair"])
      expect(text.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    for (const good of ["acme", "ünïcødé ✓", "emoji 😀", "50% off & more", ""])
      expect(text.safeParse(good).success, good).toBe(true);
  });

  it("isoTime takes instants between 1970 and 9999 only", () => {
    for (const good of ["2026-12-01T00:00:00Z", "2026-12-01T00:00:00.123+02:00", "2026-12-01", "1970-01-01T00:00Z"])
      expect(isoTime.safeParse(good).success, good).toBe(true);
    for (const bad of [
      "0000-01-01T00:00:00Z",
      "1969-12-31T23:59:59Z",
      "10000-01-01T00:00:00Z",
      "2026-12-01T00:00:00",
      "yesterday",
    ])
      expect(isoTime.safeParse(bad).success, bad).toBe(false);
  });

  it("bigintId fits a PostgreSQL bigint", () => {
    expect(bigintId.safeParse("9223372036854775807").success).toBe(true);
    for (const bad of ["9223372036854775808", "9999999999999999999", "0", "-1", "01", "1e3"])
      expect(bigintId.safeParse(bad).success, bad).toBe(false);
  });
});

describe("every query schema refuses what the database would choke on, naming the field", () => {
  const cases: [string, () => unknown, string][] = [
    ["overview jobType NUL", () => parseSearchParams(overviewQuery, "/?jobType=a%00b"), "jobType"],
    ["overview tenant NUL", () => parseSearchParams(overviewQuery, "/?tenant=a%00b"), "tenant"],
    ["gaps jobType NUL", () => parseGapsQuery("/?jobType=a%00b"), "jobType"],
    ["gaps tenant NUL", () => parseGapsQuery("/?tenant=a%00b"), "tenant"],
    ["advice jobType NUL", () => parseSearchParams(adviceQuery, "/?jobType=a%00b"), "jobType"],
    ["effects to year 0000", () => parseSearchParams(effectSearchQuery, "/?to=0000-01-01T00:00:00Z"), "to"],
    ["audit from year 0000", () => parseSearchParams(auditQuery, "/?from=0000-01-01T00:00:00Z"), "from"],
    [
      "overview from year 0000",
      () => parseSearchParams(overviewQuery, "/?from=0000-01-01T00:00:00Z&to=0000-01-02T00:00:00Z"),
      "from",
    ],
    ["malformed escape", () => parseSearchParams(effectSearchQuery, "/?q=%ZZ"), "q"],
    ["a lone UTF-8 lead byte", () => parseSearchParams(effectSearchQuery, "/?jobType=%C3"), "jobType"],
  ];
  for (const [name, parse, field] of cases) {
    it(name, () => {
      const error = refusal(parse);
      expect(error?.code).toBe("INVALID_INPUT");
      expect(error?.issues?.map((issue) => issue.path)).toContain(field);
    });
  }
});
