import { describe, expect, it } from "vitest";
import { violationsHref } from "./violations-types";

describe("violationsHref", () => {
  it("links the Violations page with only the filters given, encoded", () => {
    expect(violationsHref()).toBe("/violations");
    expect(violationsHref({ tenant: "a&b", jobType: "mark paid", constraint: null, from: "" })).toBe(
      "/violations?tenant=a%26b&jobType=mark+paid",
    );
    expect(violationsHref({ constraint: "ledger_key", limit: "10", cursor: "abc" })).toBe(
      "/violations?constraint=ledger_key&limit=10&cursor=abc",
    );
  });
});
