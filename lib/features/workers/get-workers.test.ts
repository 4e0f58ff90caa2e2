import http from "node:http";
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../config";
import { findFreePort } from "../../db/free-port";
// Only here, in a test: the real worker-library registry, so a renamed metric fails this file.
import { createMetrics } from "../../idempotency/metrics";
import { getWorkers } from "./get-workers";

/** A worker's registry with known counts, label values chosen to trip a naive parser. */
async function workerExposition(): Promise<string> {
  const registry = new Registry();
  const m = createMetrics(registry);
  m.claims.inc({ job_type: "capture-payment", result: "claimed" }, 7);
  m.claims.inc({ job_type: "capture-payment", result: "duplicate" }, 3);
  m.claims.inc({ job_type: 'send receipt, "eu"', result: "claimed" }, 2);
  m.duplicateSuppressions.inc({ job_type: "capture-payment" }, 3);
  m.deliveries.inc({ job_type: "capture-payment", redelivered: "true" }, 4);
  m.deliveries.inc({ job_type: 'send receipt, "eu"', redelivered: "true" }, 1);
  m.deliveries.inc({ job_type: "capture-payment", redelivered: "false" }, 20);
  m.uncaughtViolations.inc({ job_type: 'send receipt, "eu"', constraint: "receipts_order_id_key" }, 2);
  m.redeliveryGap.observe({ job_type: "capture-payment" }, 42);
  m.claimDuration.observe({ job_type: "capture-payment" }, 0.003);
  return registry.metrics();
}

describe("getWorkers", () => {
  let server: http.Server;
  let base: string;
  let closedPort: number;
  const hung: http.ServerResponse[] = [];
  let openHangs = 0;
  let maxOpenHangs = 0;

  beforeAll(async () => {
    const exposition = await workerExposition();
    server = http.createServer((request, response) => {
      if (request.url === "/metrics") {
        response.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
        response.end(exposition);
      } else if (request.url === "/fresh") {
        // A worker that has registered its metrics but claimed nothing yet: HELP/TYPE lines only.
        const registry = new Registry();
        createMetrics(registry);
        void registry.metrics().then((text) => response.end(text));
      } else if (request.url === "/other") {
        response.end("# TYPE up gauge\nup 1\n");
      } else if (request.url?.startsWith("/hang")) {
        hung.push(response); // never answers
        openHangs += 1;
        maxOpenHangs = Math.max(maxOpenHangs, openHangs);
        response.on("close", () => {
          openHangs -= 1;
        });
      } else {
        response.writeHead(500, { "content-type": "text/plain" });
        response.end("boom");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    closedPort = await findFreePort();
  });
  afterAll(async () => {
    for (const response of hung) response.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("is unconfigured, with no workers, when WORKER_METRICS_URLS is unset or empty", async () => {
    expect(await getWorkers({ env: {} })).toEqual({ configured: false, workers: [] });
    expect(await getWorkers({ env: { WORKER_METRICS_URLS: "" } })).toEqual({ configured: false, workers: [] });
  });

  it("sums a live worker's counters and reports a closed port as down", async () => {
    const env = { WORKER_METRICS_URLS: `${base}/metrics, http://127.0.0.1:${closedPort}/metrics` };
    const before = Date.now();
    const { configured, workers } = await getWorkers({ env });
    expect(configured).toBe(true);
    expect(workers).toHaveLength(2);
    const [up, down] = workers;
    expect(up).toEqual({
      url: `${base}/metrics`,
      up: true,
      scrapedAt: expect.any(String),
      claims: 12,
      duplicateSuppressions: 3,
      redeliveries: 5,
      uncaughtViolations: 2,
      startedAt: null,
      uptimeSeconds: null,
      // Its /metrics names no worker (no idem_worker_info): restarts unknown, never a made-up 0.
      workerName: null,
      restarts: null,
      proxyPath: "/api/v1/workers/0/metrics",
    });
    expect(Date.parse(up!.scrapedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(down).toEqual({
      url: `http://127.0.0.1:${closedPort}/metrics`,
      up: false,
      error: "connection refused",
      scrapedAt: expect.any(String),
      claims: null,
      duplicateSuppressions: null,
      redeliveries: null,
      uncaughtViolations: null,
      workerName: null,
      restarts: null,
      proxyPath: "/api/v1/workers/1/metrics",
    });
  });

  it("shows a worker that has claimed nothing yet as up with zeros", async () => {
    const { workers } = await getWorkers({ env: { WORKER_METRICS_URLS: `${base}/fresh` } });
    expect(workers[0]).toMatchObject({ up: true, claims: 0, duplicateSuppressions: 0, redeliveries: 0, uncaughtViolations: 0 });
  });

  it("names why a worker is down: HTTP status, not a worker, timeout", async () => {
    const env = { WORKER_METRICS_URLS: [`${base}/missing`, `${base}/other`, `${base}/hang`].join(",") };
    const { workers } = await getWorkers({ env, timeoutMs: 300 });
    expect(workers.map((w) => [w.up, w.error])).toEqual([
      [false, "HTTP 500 Internal Server Error"],
      [false, "answered without the worker library's idem_* metrics: is this a worker's /metrics URL?"],
      [false, "no answer within 0.3 s"],
    ]);
  });

  it("scrapes in parallel: hung workers cost one timeout, not one each", async () => {
    const env = { WORKER_METRICS_URLS: [1, 2, 3, 4].map((n) => `${base}/hang${n}`).join(",") };
    maxOpenHangs = 0;
    const { workers } = await getWorkers({ env, timeoutMs: 500 });
    // Sequential scrapes would abandon each hung request before asking the next: never 4 open at once.
    expect(maxOpenHangs).toBe(4);
    expect(workers.every((w) => !w.up && w.error === "no answer within 0.5 s")).toBe(true);
  });

  it("rejects a malformed entry with a ConfigError naming it", async () => {
    const env = { WORKER_METRICS_URLS: `${base}/metrics,127.0.0.1:9464/metrics` };
    const error = await getWorkers({ env }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      'invalid configuration: WORKER_METRICS_URLS has an entry that is not an http(s) URL: "127.0.0.1:9464/metrics"',
    );
  });
});
