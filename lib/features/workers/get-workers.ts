import { loadWorkerMetricsUrls } from "../../config";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
import { readWorkerRestarts, WORKER_INFO_METRIC } from "../../idempotency/admin";
import type { WorkerStatus } from "./contract";
import { parsePrometheusText, sumSamples } from "./prometheus-text";
import { RESTART_WINDOW_SECONDS } from "./workers-types";

/**
 * The worker library's counters the Workers panel shows, by the names lib/idempotency/metrics.ts
 * registers (a test serves that file's real registry, so a rename there fails here). Summed across
 * job types and the other labels.
 */
const WORKER_COUNTERS = {
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

const DEFAULT_SCRAPE_TIMEOUT_MS = 2000;

interface GetWorkersInput {
  /** Where WORKER_METRICS_URLS is read from (through lib/config); tests pass their own. */
  env?: Readonly<Record<string, string | undefined>>;
  timeoutMs?: number;
  /** Where the workers' recorded starts are read (their restarts): the effects store, by default the configured one. */
  db?: EffectsSource;
  now?: Date;
}

// The library's restart count (readWorkerRestarts) on MySQL, where the workers record their starts
// beside their effects (worker_starts, the same columns): every distinct process start after
// `since` but the first one on record. Params: worker names, since.
const COUNT_RESTARTS_MYSQL = `
WITH starts AS (
  SELECT DISTINCT process_started_at, host, pid FROM worker_starts WHERE worker_name IN (?)
), numbered AS (
  SELECT process_started_at, ROW_NUMBER() OVER (ORDER BY process_started_at, host, pid) AS n FROM starts
)
SELECT count(*) AS restarts FROM numbered WHERE process_started_at > ? AND n > 1`;

interface Workers {
  /** False when WORKER_METRICS_URLS is unset (or lists nothing). */
  configured: boolean;
  workers: WorkerStatus[];
}

const down = (url: string, error: string): WorkerStatus => ({
  url,
  up: false,
  error,
  scrapedAt: new Date().toISOString(),
  workerName: null,
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

/** One scrape: the worker's status and counters, and the names it gives itself (idem_worker_info). */
async function scrape(url: string, timeoutMs: number): Promise<WorkerStatus & { workerNames?: string[] }> {
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
  const names = [
    ...new Set(samples.filter((x) => x.name === WORKER_INFO_METRIC).flatMap((x) => x.labels.worker_name || [])),
  ].sort();
  const start = samples.find((x) => x.name === "process_start_time_seconds")?.value;
  const started = start !== undefined && Number.isFinite(start) ? start : null;
  return {
    url,
    up: true,
    startedAt: started === null ? null : new Date(started * 1000).toISOString(),
    uptimeSeconds: started === null ? null : Math.max(0, Math.round(Date.now() / 1000 - started)),
    scrapedAt: new Date().toISOString(),
    workerName: names.join(", ") || null,
    workerNames: names,
    claims: total(WORKER_COUNTERS.claims),
    duplicateSuppressions: total(WORKER_COUNTERS.duplicateSuppressions),
    redeliveries: total(WORKER_COUNTERS.redeliveries),
    uncaughtViolations: total(WORKER_COUNTERS.uncaughtViolations),
  };
}

/**
 * The Workers panel's question: is each worker process in WORKER_METRICS_URLS answering, what have
 * its counters reached, and how often has it restarted in the last RESTART_WINDOW_SECONDS? Every
 * URL is scraped at once, each with its own short timeout, so one hung worker costs at most
 * `timeoutMs`. Restarts come from the starts the workers recorded themselves (worker_starts, under
 * the name their /metrics gives in idem_worker_info), so they are counted whether or not a console
 * page was open; null when unknown (a worker that never named itself, or no database answer: the
 * counters still show). A malformed entry throws lib/config's ConfigError naming it (CONFIG_INVALID:
 * the panel says the workers' addresses are misconfigured, never that the database is).
 */
export async function getWorkers(input: GetWorkersInput = {}): Promise<Workers> {
  const urls = loadWorkerMetricsUrls(input.env ?? process.env);
  const timeoutMs = input.timeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS;
  const since = new Date((input.now ?? new Date()).getTime() - RESTART_WINDOW_SECONDS * 1000);
  const workers = await Promise.all(
    urls.map(async (url, i) => {
      const { workerNames, ...status } = await scrape(url, timeoutMs);
      const names = rememberedNames(url, workerNames ?? []);
      const restarts = names.length === 0 ? null : await restartsOf(input.db, names, since);
      return { ...status, workerName: names.join(", ") || null, restarts, proxyPath: `/api/v1/workers/${i}/metrics` };
    }),
  );
  return { configured: urls.length > 0, workers };
}

async function restartsOf(db: EffectsSource | undefined, names: string[], since: Date): Promise<number | null> {
  try {
    return await byEngine(db ?? effectsStore(), {
      postgres: (pg) => readWorkerRestarts(pg, names, since),
      mysql: async (my) => Number((await my.query<{ restarts: number }>(COUNT_RESTARTS_MYSQL, [names, since]))[0]?.restarts ?? 0),
    });
  } catch {
    // The counters are the workers' own and still show; the restarts are the database's to say.
    return null;
  }
}

declare global {
  var __onceboardWorkerNames: Map<string, string[]> | undefined;
}

/**
 * The names a worker URL last answered with, so a worker that is down right now (crash-looping,
 * most likely) still has its restarts counted. Kept on globalThis (route handlers load separate
 * module copies). Only the name is remembered: the count is always read from the database.
 */
function rememberedNames(url: string, names: string[]): string[] {
  globalThis.__onceboardWorkerNames ??= new Map();
  if (names.length > 0) globalThis.__onceboardWorkerNames.set(url, names);
  return globalThis.__onceboardWorkerNames.get(url) ?? [];
}

/** The n-th configured worker's /metrics text, or null when there is no such worker (never an arbitrary URL). */
export async function fetchWorkerMetrics(
  index: number,
  input: GetWorkersInput = {},
): Promise<{ status: number; body: string } | null> {
  const urls = loadWorkerMetricsUrls(input.env ?? process.env);
  const url = urls[index];
  if (url === undefined) return null;
  const timeoutMs = input.timeoutMs ?? DEFAULT_SCRAPE_TIMEOUT_MS;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), cache: "no-store" });
    return { status: response.ok ? 200 : 502, body: await response.text() };
  } catch (error) {
    return { status: 502, body: `worker ${index} did not answer: ${describeScrapeError(error, timeoutMs)}\n` };
  }
}
