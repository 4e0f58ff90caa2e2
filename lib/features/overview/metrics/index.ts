import { loadConfig } from "../../../config";
import { consoleDatabase } from "../../../console/database";
import { byEngine, type EffectsSource } from "../../../console/effects-store";
import { MysqlSource } from "./mysql-source";
import { PostgresSource } from "./postgres-source";
import { PrometheusSource } from "./prometheus-source";
import type { MetricsSource } from "./source";

/** The configured source: Prometheus when PROMETHEUS_URL is set, else the effects store's rollups (PostgreSQL or MySQL). */
export function metricsSource(db: EffectsSource, env: NodeJS.ProcessEnv = process.env): MetricsSource {
  const url = loadConfig(env).PROMETHEUS_URL;
  if (url) return new PrometheusSource(url);
  return byEngine<MetricsSource>(db, {
    postgres: (pg) => new PostgresSource(pg),
    mysql: (my) => new MysqlSource(my, consoleDatabase()),
  });
}

export { MysqlSource } from "./mysql-source";
export { PostgresSource } from "./postgres-source";
export { PrometheusSource } from "./prometheus-source";
export type { MetricsSource } from "./source";
