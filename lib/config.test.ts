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

describe("loadConfig in a production server", () => {
  const saved = { NODE_ENV: process.env.NODE_ENV, hours: process.env.ONCEBOARD_SESSION_HOURS };
  const restore = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };

  it("parses process.env once: its environment is fixed when it starts", () => {
    try {
      (process.env as Record<string, string>).NODE_ENV = "production";
      process.env.ONCEBOARD_SESSION_HOURS = "5";
      const first = loadConfig();
      expect(first.ONCEBOARD_SESSION_HOURS).toBe(5);
      process.env.ONCEBOARD_SESSION_HOURS = "6";
      expect(loadConfig()).toBe(first);
      // An environment a caller passes is still compared on every call.
      const env: Record<string, string | undefined> = { ONCEBOARD_SESSION_HOURS: "7" };
      expect(loadConfig(env).ONCEBOARD_SESSION_HOURS).toBe(7);
      env.ONCEBOARD_SESSION_HOURS = "9";
      expect(loadConfig(env).ONCEBOARD_SESSION_HOURS).toBe(9);
    } finally {
      restore("NODE_ENV", saved.NODE_ENV);
      restore("ONCEBOARD_SESSION_HOURS", saved.hours);
    }
  });
});
