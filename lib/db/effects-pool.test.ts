import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config";
import { mysqlEffectsTarget } from "./effects-pool";

describe("EFFECTS_DATABASE_URL", () => {
  it("unset (or empty): the effects are the console's PostgreSQL", () => {
    expect(mysqlEffectsTarget({})).toBeNull();
    expect(mysqlEffectsTarget({ EFFECTS_DATABASE_URL: "" })).toBeNull();
  });

  it("a mysql:// or mariadb:// URL: its database holds the library's tables, else ONCEBOARD_SCHEMA", () => {
    expect(mysqlEffectsTarget({ EFFECTS_DATABASE_URL: "mysql://root@db.internal:3306/effects" })).toEqual({
      url: "mysql://root@db.internal:3306/effects",
      database: "effects",
    });
    expect(mysqlEffectsTarget({ EFFECTS_DATABASE_URL: "mariadb://root@db.internal" })?.database).toBe("onceboard");
    expect(mysqlEffectsTarget({ EFFECTS_DATABASE_URL: "mysql://root@db.internal/", ONCEBOARD_SCHEMA: "billing" })?.database).toBe(
      "billing",
    );
  });

  it("anything else is refused with a message naming the variable and what it must be", () => {
    for (const bad of [
      "postgresql://postgres@127.0.0.1:5432/postgres",
      "mysql:///onceboard",
      "not a url",
      "http://db.internal:3306/onceboard",
      "mysql://root@db.internal:3306/on%20ceboard",
      "mysql://root@db.internal:3306/a/b",
    ]) {
      let error: unknown;
      try {
        loadConfig({ EFFECTS_DATABASE_URL: bad });
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect((error as Error).message, bad).toMatch(
        /^invalid configuration: EFFECTS_DATABASE_URL (must be a URL like mysql:\/\/|names a database)/,
      );
    }
    expect(() => loadConfig({ EFFECTS_DATABASE_URL: "postgresql://postgres@127.0.0.1/x" })).toThrow(
      /leave it unset to read the effects from the console's PostgreSQL/,
    );
  });
});
