import { describe, expect, it } from "vitest";
import { numberedToPositional } from "../mysql";

/** The one rewrite of PostgreSQL's numbered parameters for mysql2 (the demo's shop, the engine-pair tests). */
describe("numberedToPositional", () => {
  it("binds each $n where it stands, repeats and any order included", () => {
    expect(numberedToPositional("SELECT $2, $1, $2 WHERE k = $1", ["a", "b"])).toEqual({
      text: "SELECT ?, ?, ? WHERE k = ?",
      values: ["b", "a", "b", "a"],
    });
  });

  it("reads $10 as the tenth value, not the first followed by a 0", () => {
    const values = Array.from({ length: 10 }, (_, i) => `v${i + 1}`);
    expect(numberedToPositional("SELECT $10, $1", values)).toEqual({ text: "SELECT ?, ?", values: ["v10", "v1"] });
  });

  it("leaves a text written with ? as it is, with a copy of its values", () => {
    const values = [1, 2];
    const out = numberedToPositional("SELECT ? + ?", values);
    expect(out).toEqual({ text: "SELECT ? + ?", values: [1, 2] });
    expect(out.values).not.toBe(values);
  });
});
