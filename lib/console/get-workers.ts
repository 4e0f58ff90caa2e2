import { loadWorkerMetricsUrls } from "../config";
import { parsePrometheusText, sumSamples } from "./prometheus-text";
import type { WorkerStatus } from "./workers-types";

/**
 * The worker library's counters the Workers panel shows, by the names lib/idempotency/metrics.ts
 * registers (a test serves that file's real registry, so a rename there fails here). Summed across
 * job types and the other labels.
 */
export const WORKER_COUNTERS = {
  claims: { metric: "idem_claims_total" },
  duplicateSuppressions: { metric: "idem_duplicate_suppressions_total" },
  redeliveries: { metric: "idem_deliveries_total", match: { redelivered: "true" } },
  uncaughtViolations: { metric: "idem_unique_violations_uncaught_total" },
} as const satisfies Record<WorkerCounter, CounterSpec>;

type WorkerCounter = "claims" | "duplicateSuppressions" | "redeliveries" | "uncaughtViolations";
interface CounterSpec {
  metric: string;
  /** Only samples carrying these label values count. */
  match?: Readonly<Record<string, string>>;
}

export const DEFAULT_SCRAPE_TIMEOUT_MS = 2000;

export interface GetWorkersInput {
  /** Where WORKER_METRICS_URLS is read from (through lib/config); tests pass their own. */
  env?: Readonly<Record<string, string | undefined>>;
  timeoutMs?: number;
}

export interface Workers {
  /** False when WORKER_METRICS_URLS is unset (or lists nothing). */
  configured: boolean;
  workers: WorkerStatus[];
}

const down = (url: string, error: string): WorkerStatus => ({
  url,
  up: false,
  error,
  scrapedAt: new Date().toISOString(),
  claims: null,
  duplicateSuppressions: null,
  redeliveries: null,
  uncaughtViolations: null,
});

/** fetch() failures in words an operator can act on; undici hides the socket error in `cause`. */
function describeScrapeError(error: unknown, timeoutMs: number): string {
  const err = error as {
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string; errors?: { code?: string }[] };
  };
  if (err?.name === "TimeoutError" || err?.name === "AbortError") return `no answer within ${timeoutMs / 1000} s`;
  const code = err?.cause?.code ?? err?.cause?.errors?.[0]?.code;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host not found";
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET") return "connection reset";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "host unreachable";
  return err?.cause?.message || err?.message || String(error);
}

async function scrape(url: string, timeoutMs: number): Promise<WorkerStatus> {
  let text: string;
  try {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(timeoutMs),
      headers: { accept: "text/plain;version=0.0.4;q=1, */*;q=0.1" },
      cache: "no-store",
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      return down(url, `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`);
    }
    text = await response.text();
  } catch (error) {
    return down(url, describeScrapeError(error, timeoutMs));
  }

  const { samples, types } = parsePrometheusText(text);
  const specs: CounterSpec[] = Object.values(WORKER_COUNTERS);
  const isWorker = specs.some(
    (c) => types.has(c.metric) || types.has(c.metric.replace(/_total$/, "")) || samples.some((s) => s.name === c.metric),
  );
  if (!isWorker) return down(url, "answered without the worker library's idem_* metrics: is this a worker's /metrics URL?");

  const total = (c: CounterSpec) => sumSamples(samples, c.metric, c.match);
  return {
    url,
    up: true,
    scrapedAt: new Date().toISOString(),
    claims: total(WORKER_COUNTERS.claims),
    duplicateSuppressions: total(WORKER_COUNTERS.duplicateSuppressions),
    redeliveries: total(WORKER_COUNTERS.redeliveries),
    uncaughtViolations: total(WORKER_COUNTERS.uncaughtViolations),
  };
}

/**
 * The Workers panel's question: is each worker process in WORKER_METRICS_URLS answering, and what
 * have its counters reached? Every URL is scraped at once, each with its own short timeout, so one
 * hung worker costs at most `timeoutMs`. A malformed entry throws lib/config's ConfigError naming it
 * (CONFIG_INVALID: the panel says the workers' addresses are misconfigured, never that the database is).
 */
export async function getWorkers(input: GetWorkersInput = {}): Promise<Workers> {
  const urls = loadWorkerMetricsUrls(input.env ?? process.env);
  const timeoutMs = input.timeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS;
  const workers = await Promise.all(urls.map((url) => scrape(url, timeoutMs)));
  return { configured: urls.length > 0, workers };
}
