import type { AlertStateName, AlertStatus, FleetJobTypeActivity, Series, ViolationSeries } from "../contract";
import { ALERT_RULES, runbookHref } from "./alert-rules";
import { notWiredUp } from "./series-math";
import { type MetricsSource, MetricsSourceError, type SeriesQuery, type SourceResult } from "./source";

interface PromMatrix {
  metric: Record<string, string>;
  values: [number, string][];
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"');

/**
 * query_range over the worker metrics. Each point is increase(x[step]) at t: the events in
 * (t - step, t], the same buckets as the rollups. The step comes from the chart's width
 * (series-math chooseStep), so a query never asks for more than 11,000 points.
 */
export class PrometheusSource implements MetricsSource {
  readonly name = "prometheus" as const;

  constructor(
    private readonly baseUrl: string,
    private readonly options: { timeoutMs?: number; fetch?: typeof fetch } = {},
  ) {}

  private async get<T>(path: string, params: Record<string, string>): Promise<T> {
    const url = new URL(path, this.baseUrl.endsWith("/") ? this.baseUrl : `${this.baseUrl}/`);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    let response: Response;
    try {
      response = await (this.options.fetch ?? fetch)(url, { signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000) });
    } catch (error) {
      throw new MetricsSourceError(
        `Prometheus at ${this.baseUrl} did not answer: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
    }
    const body = (await response.json().catch(() => null)) as {
      status?: string;
      data?: T;
      error?: string;
      errorType?: string;
    } | null;
    if (!response.ok || body?.status !== "success") {
      throw new MetricsSourceError(
        `Prometheus answered ${response.status}${body?.error ? `: ${body.errorType ?? "error"}: ${body.error}` : ""} (${url.pathname})`,
      );
    }
    return body.data as T;
  }

  /** One PromQL expression over the buckets: a value per point per label set. */
  async range(expr: string, query: SeriesQuery): Promise<{ metric: Record<string, string>; values: (number | null)[] }[]> {
    const { timestamps, stepSeconds } = query.buckets;
    const start = (timestamps[0] ?? 0) / 1000;
    const end = (timestamps[timestamps.length - 1] ?? 0) / 1000;
    const data = await this.get<{ resultType: string; result: PromMatrix[] }>("api/v1/query_range", {
      query: expr,
      start: String(start),
      end: String(end),
      step: `${stepSeconds}s`,
    });
    return data.result.map((m) => {
      const values = new Array<number | null>(timestamps.length).fill(null);
      for (const [t, v] of m.values) {
        const i = Math.round((t - start) / stepSeconds);
        const x = Number(v);
        if (i >= 0 && i < values.length && Number.isFinite(x)) values[i] = x;
      }
      return { metric: m.metric, values };
    });
  }

  async series(query: SeriesQuery): Promise<SourceResult> {
    const n = query.buckets.timestamps.length;
    const step = `${query.buckets.stepSeconds}s`;
    const sel = query.jobType ? `{job_type="${escapeLabel(query.jobType)}"}` : "";
    const selWith = (extra: string) => (query.jobType ? `{job_type="${escapeLabel(query.jobType)}",${extra}}` : `{${extra}}`);
    const inc = (metric: string, s = sel) => `increase(${metric}${s}[${step}])`;
    const [suppressed, violations, claims, inFlight, takeovers, p50, p99, deliveries] = await Promise.all([
      this.range(`sum by (job_type) (${inc("idem_duplicate_suppressions_total")})`, query),
      this.range(`sum by (job_type, constraint) (${inc("idem_unique_violations_uncaught_total")})`, query),
      this.range(`sum by (job_type) (${inc("idem_claims_total")})`, query),
      this.range(`sum(${inc("idem_claims_total", selWith('result="in_flight"'))})`, query),
      this.range(`sum(${inc("idem_takeovers_total")})`, query),
      this.range(`histogram_quantile(0.5, sum by (le) (${inc("idem_claim_duration_seconds_bucket")}))`, query),
      this.range(`histogram_quantile(0.99, sum by (le) (${inc("idem_claim_duration_seconds_bucket")}))`, query),
      this.range(`sum by (job_type, redelivered) (${inc("idem_deliveries_total")})`, query),
    ]);

    const total = (values: (number | null)[]) => values.reduce<number>((a, b) => a + (b ?? 0), 0);
    const activity = new Map<string, FleetJobTypeActivity>();
    const row = (jobType: string) => {
      let a = activity.get(jobType);
      if (!a) {
        a = { jobType, deliveries: 0, redeliveries: 0, suppressions: 0, claims: 0, uncaughtViolations: 0, notWiredUp: false };
        activity.set(jobType, a);
      }
      return a;
    };
    // increase() extrapolates: totals are rounded to whole events.
    for (const m of claims) row(m.metric.job_type ?? "").claims += total(m.values);
    for (const m of suppressed) row(m.metric.job_type ?? "").suppressions += total(m.values);
    for (const m of violations) row(m.metric.job_type ?? "").uncaughtViolations += total(m.values);
    for (const m of deliveries) {
      const a = row(m.metric.job_type ?? "");
      a.deliveries += total(m.values);
      if (m.metric.redelivered === "true") a.redeliveries += total(m.values);
    }
    const jobTypes = [...activity.values()]
      .map((a) => {
        const rounded = {
          ...a,
          deliveries: Math.round(a.deliveries),
          redeliveries: Math.round(a.redeliveries),
          suppressions: Math.round(a.suppressions),
          claims: Math.round(a.claims),
          uncaughtViolations: Math.round(a.uncaughtViolations),
        };
        return { ...rounded, notWiredUp: notWiredUp(rounded.redeliveries, rounded.suppressions) };
      })
      .sort((a, b) => b.deliveries - a.deliveries || b.claims - a.claims || a.jobType.localeCompare(b.jobType));

    const claimCounts = new Array<number | null>(n).fill(null);
    for (const m of claims)
      m.values.forEach((v, i) => {
        if (v !== null) claimCounts[i] = (claimCounts[i] ?? 0) + v;
      });
    const single = (r: { values: (number | null)[] }[]) => r[0]?.values ?? new Array<number | null>(n).fill(null);

    return {
      jobTypes,
      series: {
        stepSeconds: query.buckets.stepSeconds,
        timestamps: query.buckets.timestamps,
        suppressionBuckets: { stepSeconds: query.buckets.stepSeconds, timestamps: query.buckets.timestamps },
        suppressions: suppressed
          .map((m): Series => ({ name: m.metric.job_type ?? "", values: m.values }))
          .filter((s) => s.values.some((v) => (v ?? 0) > 0))
          .sort((a, b) => a.name.localeCompare(b.name)),
        violations: violations
          .map(
            (m): ViolationSeries => ({
              name: `${m.metric.job_type ?? ""} · ${m.metric.constraint ?? ""}`,
              jobType: m.metric.job_type ?? "",
              constraint: m.metric.constraint ?? "",
              values: m.values,
            }),
          )
          .filter((s) => s.values.some((v) => (v ?? 0) > 0))
          .sort((a, b) => a.name.localeCompare(b.name)),
        claimRate: claimCounts.map((c) => (c === null ? null : c / query.buckets.stepSeconds)),
        latencyP50: single(p50),
        latencyP99: single(p99),
        inFlight: single(inFlight),
        takeovers: single(takeovers),
      },
    };
  }

  /** The state of deploy/alerts.yml's rules as Prometheus evaluates them (GET /api/v1/rules). */
  async alerts(): Promise<AlertStatus[]> {
    const data = await this.get<{
      groups: {
        rules: {
          name: string;
          type?: string;
          state?: string;
          labels?: Record<string, string>;
          alerts?: { labels: Record<string, string>; state: string; value: string }[];
        }[];
      }[];
    }>("api/v1/rules", { type: "alert" });
    const loaded = new Map(data.groups.flatMap((g) => g.rules).map((r) => [r.name, r]));
    const asState = (s: string | undefined): AlertStateName =>
      s === "firing" || s === "pending" || s === "inactive" ? s : "unknown";
    return ALERT_RULES.map((rule) => {
      const r = loaded.get(rule.name);
      const base = { name: rule.name, severity: rule.severity as string, summary: rule.summary, runbook: runbookHref(rule.name) };
      if (!r)
        return {
          ...base,
          state: "unknown",
          instances: [],
          note: `This rule is not loaded in Prometheus (rule_files: ${rule.file ?? "deploy/alerts.yml"}).`,
        };
      return {
        ...base,
        severity: r.labels?.severity ?? rule.severity,
        state: asState(r.state),
        instances: (r.alerts ?? []).map((a) => {
          const { alertname: _a, severity: _s, ...labels } = a.labels;
          return { labels, state: asState(a.state), value: Number.isFinite(Number(a.value)) ? Number(a.value) : null };
        }),
      };
    });
  }
}
