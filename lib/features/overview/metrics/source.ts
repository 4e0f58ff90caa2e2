import { ConsoleError } from "../../../console/errors";
import type { AlertStatus, FleetJobTypeActivity, MetricsSourceName, OverviewSeries } from "../contract";
import type { Buckets } from "./series-math";

export interface SeriesQuery {
  buckets: Buckets;
  jobType: string | null;
}

/** What a source answers for the range: the charts, and per job type totals (the sums of the same buckets). */
export interface SourceResult {
  series: OverviewSeries;
  jobTypes: FleetJobTypeActivity[];
}

/**
 * Where the Overview's numbers come from: the PostgreSQL rollups the worker library writes
 * (default), or Prometheus when PROMETHEUS_URL is set. Tenant-level data (which the metrics
 * never carry) always comes from PostgreSQL.
 */
export interface MetricsSource {
  readonly name: MetricsSourceName;
  series(query: SeriesQuery): Promise<SourceResult>;
  alerts(now: Date): Promise<AlertStatus[]>;
}

/** A Prometheus error (HTTP, PromQL, unreachable): a 502 shown on the page, never swallowed. */
export class MetricsSourceError extends ConsoleError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("METRICS_SOURCE_FAILED", message, options);
  }
}
