import { loadConfig } from "../../../config";
import type { Queryable } from "../../../db/types";
import { PostgresSource } from "./postgres-source";
import { PrometheusSource } from "./prometheus-source";
import type { MetricsSource } from "./source";

/** The configured source: Prometheus when PROMETHEUS_URL is set, else the PostgreSQL rollups. */
export function metricsSource(db: Queryable, env: NodeJS.ProcessEnv = process.env): MetricsSource {
  const url = loadConfig(env).PROMETHEUS_URL;
  return url ? new PrometheusSource(url) : new PostgresSource(db);
}

export { PostgresSource } from "./postgres-source";
export { PrometheusSource } from "./prometheus-source";
export type { MetricsSource } from "./source";
