import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError } from "../config";
import { ConsoleError } from "../console/errors";
import { ApiError, errorResponse } from "./errors";
import { parseSearchParams } from "./parse";

describe("errorResponse", () => {
  it("maps an unreachable database to 503 with the message and no stack", async () => {
    const response = errorResponse(new ConsoleError("DATABASE_UNAVAILABLE", "cannot reach PostgreSQL (connection refused)"));
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(await response.json()).toEqual({
      error: { code: "DATABASE_UNAVAILABLE", message: "cannot reach PostgreSQL (connection refused)" },
    });
  });

  it("shows a malformed environment variable's message with CONFIG_INVALID", async () => {
    const response = errorResponse(
      new ConfigError('invalid configuration: WORKER_METRICS_URLS has an entry that is not an http(s) URL: "x"'),
    );
    expect(response.status).toBe(500);
    expect((await response.json()).error).toEqual({
      code: "CONFIG_INVALID",
      message: 'invalid configuration: WORKER_METRICS_URLS has an entry that is not an http(s) URL: "x"',
    });
  });

  it("hides unknown errors behind a 500", async () => {
    const spy = console.error;
    console.error = () => {};
    try {
      const response = errorResponse(new Error("SELECT secret FROM somewhere failed"));
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(text).not.toContain("secret");
      expect(text).not.toContain("at ");
    } finally {
      console.error = spy;
    }
  });
});

describe("parseSearchParams", () => {
  const schema = z.object({ window: z.enum(["1h", "24h"]).default("24h") });

  it("applies defaults and ignores unknown keys", () => {
    expect(parseSearchParams(schema, new URL("http://x/?theme=dark"))).toEqual({ window: "24h" });
    expect(parseSearchParams(schema, "/api?window=1h")).toEqual({ window: "1h" });
  });

  it("throws INVALID_INPUT naming the parameter", () => {
    try {
      parseSearchParams(schema, new URL("http://x/?window=5y"));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      expect((error as ApiError).message).toMatch(/^invalid query: window /);
      expect((error as ApiError).issues?.[0]?.path).toBe("window");
    }
  });
});
