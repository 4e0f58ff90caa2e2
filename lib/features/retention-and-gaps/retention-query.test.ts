import { describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors";
import { DEFAULT_RETENTION_RUNS, MAX_RETENTION_RUNS } from "./contract";
import { parseRetentionQuery } from "./retention-query";

describe("parseRetentionQuery (the Retention page and GET /api/v1/retention)", () => {
  it("defaults to 20 runs and reads ?runs= within 1-200, the last value of a repeated key", () => {
    expect(parseRetentionQuery("")).toEqual({ runs: DEFAULT_RETENTION_RUNS });
    expect(parseRetentionQuery("?runs=5")).toEqual({ runs: 5 });
    expect(parseRetentionQuery(new URLSearchParams("runs=1&runs=200"))).toEqual({ runs: MAX_RETENTION_RUNS });
  });

  it.each(["banana", "0", "201", "2.5"])("refuses runs=%s with a 400 naming the field", (value) => {
    let caught: unknown;
    try {
      parseRetentionQuery(`?runs=${value}`);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect(caught).toMatchObject({ code: "INVALID_INPUT", message: expect.stringMatching(/^invalid query: runs /) });
  });
});
