import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config";

describe("loadConfig's last parse", () => {
  it("answers an unchanged environment with the same frozen configuration", () => {
    const env: Record<string, string | undefined> = { TRUSTED_PROXIES: "10.0.0.1, 10.1.0.0/16" };
    const first = loadConfig(env);
    expect(loadConfig(env)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.TRUSTED_PROXIES)).toBe(true);
    expect(() => {
      (first as { CONSOLE_READ_ONLY: boolean }).CONSOLE_READ_ONLY = true;
    }).toThrow(TypeError);
  });

  it("parses again when a variable changes, is set or is unset", () => {
    const env: Record<string, string | undefined> = { ONCEBOARD_SESSION_HOURS: "8" };
    expect(loadConfig(env).ONCEBOARD_SESSION_HOURS).toBe(8);
    env.ONCEBOARD_SESSION_HOURS = "2";
    expect(loadConfig(env).ONCEBOARD_SESSION_HOURS).toBe(2);
    env.CONSOLE_READ_ONLY = "true";
    expect(loadConfig(env).CONSOLE_READ_ONLY).toBe(true);
    delete env.CONSOLE_READ_ONLY;
    expect(loadConfig(env).CONSOLE_READ_ONLY).toBe(false);
  });

  it("tells an empty variable from an unset one", () => {
    const env: Record<string, string | undefined> = {};
    const unset = loadConfig(env);
    env.ONCEBOARD_SESSION_HOURS = "";
    expect(loadConfig(env)).not.toBe(unset);
  });

  it("refuses a variable made bad after a good parse, every time it is asked", () => {
    const env: Record<string, string | undefined> = { ONCEBOARD_SESSION_HOURS: "8" };
    loadConfig(env);
    env.ONCEBOARD_SESSION_HOURS = "eight";
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/ONCEBOARD_SESSION_HOURS/);
  });

  it("keeps environments apart", () => {
    const a = loadConfig({ ONCEBOARD_SESSION_HOURS: "3" });
    const b = loadConfig({ ONCEBOARD_SESSION_HOURS: "4" });
    expect([a.ONCEBOARD_SESSION_HOURS, b.ONCEBOARD_SESSION_HOURS]).toEqual([3, 4]);
  });
});
