import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { defaultRegistry } from "./metrics";
import { processStartedAt } from "./process-start";
import { requirePromClient } from "./prom";

export interface MetricsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A /metrics endpoint for a worker process (Prometheus text format). Port 0 picks a free port. */
export async function serveMetrics(
  options: { port: number; host?: string; registry?: Registry; path?: string } = { port: 9464 },
): Promise<MetricsServer> {
  const registry = options.registry ?? defaultRegistry();
  const metricsPath = options.path ?? "/metrics";
  // The standard process_start_time_seconds, so the console (and Prometheus) can tell a
  // restart from a quiet worker. Registered once per registry (prom-client's default-metrics name).
  if (!registry.getSingleMetric("process_start_time_seconds")) {
    const started = processStartedAt().getTime() / 1000;
    new (requirePromClient("serveMetrics").Gauge)({
      name: "process_start_time_seconds",
      help: "Start time of the process since unix epoch in seconds.",
      registers: [registry],
    }).set(started);
  }
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== metricsPath) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { "content-type": registry.contentType }).end(body),
      (error: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`${String(error)}\n`),
    );
  });
  const host = options.host ?? "0.0.0.0";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}${metricsPath}`,
    port,
    close: () => new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
