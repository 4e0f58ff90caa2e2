import { afterAll, describe, expect, inject, it } from "vitest";
import { ConfigError, loadConfig, loadWorkerMetricsUrls } from "../../config";
import { consoleDatabase } from "../../console/database";
import { getWorkers } from "./get-workers";

/**
 * A malformed WORKER_METRICS_URLS is reported as exactly that. It used to fail
 * the whole configuration, so the console's pool reported DATABASE_NOT_CONFIGURED and every panel
 * said the database was unreachable.
 */
describe("a malformed WORKER_METRICS_URLS", () => {
  const saved = { DATABASE_URL: process.env.DATABASE_URL, WORKER_METRICS_URLS: process.env.WORKER_METRICS_URLS };
  afterAll(async () => {
    await globalThis.__onceboardPool?.end();
    globalThis.__onceboardPool = undefined;
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  const bad = { WORKER_METRICS_URLS: "http://127.0.0.1:9464/metrics, 127.0.0.1:9465/metrics" };

  it("leaves the rest of the configuration valid", () => {
    expect(loadConfig({ ...bad, DATABASE_URL: "postgresql://u@h:5432/d" }).DATABASE_URL).toBe("postgresql://u@h:5432/d");
  });

  it("is named, alone, by the Workers question (CONFIG_INVALID)", async () => {
    const message =
      'invalid configuration: WORKER_METRICS_URLS has an entry that is not an http(s) URL: "127.0.0.1:9465/metrics"';
    expect(() => loadWorkerMetricsUrls(bad)).toThrow(new ConfigError(message));
    const failure = await getWorkers({ env: bad }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect(failure).toMatchObject({ code: "CONFIG_INVALID", message });
  });

  it("does not stop the console's database queries", async () => {
    process.env.DATABASE_URL = inject("adminDatabaseUrl");
    process.env.WORKER_METRICS_URLS = bad.WORKER_METRICS_URLS;
    globalThis.__onceboardPool = undefined;
    const { rows } = await consoleDatabase().query<{ ok: number }>("SELECT 1 AS ok");
    expect(rows).toEqual([{ ok: 1 }]);
  });

  it("still parses good lists", () => {
    expect(loadWorkerMetricsUrls({ WORKER_METRICS_URLS: " http://a:1/metrics,,http://a:1/metrics, https://b/metrics" })).toEqual([
      "http://a:1/metrics",
      "https://b/metrics",
    ]);
    expect(loadWorkerMetricsUrls({})).toEqual([]);
  });
});
