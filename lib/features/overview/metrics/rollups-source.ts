import type { AlertStatus, FleetJobTypeActivity, MetricsSourceName, Series, ViolationSeries } from "../contract";
import { CLAIM_DURATION_BOUNDS } from "../overview-types";
import { ALERT_RULES, runbookHref } from "./alert-rules";
import { addToViolationLine, type Buckets, histogramQuantile, notWiredUp, perSecond } from "./series-math";
import type { MetricsSource, SeriesQuery, SourceResult } from "./source";

/**
 * What the rollups answer for a range, as either engine's statements return it (postgres-source.ts,
 * mysql-source.ts), before it is made into the charts: the mapping and the alert rules are here,
 * once, so the two engines' Overviews cannot drift apart.
 */
export interface SeriesRows {
  /** A point's row (job_type null: its claims, waits, takeovers over all job types) or a job type's over the range (i null). */
  stats: {
    job_type: string | null;
    i: number | null;
    claims: number;
    suppressed: number;
    in_flight: number;
    takeovers: number;
    deliveries: number;
    redeliveries: number;
  }[];
  /** Suppressions per job type: its points' indexes and counts ([[i…], [n…]]), only where there are some. */
  lines: { job_type: string; points: [number[], number[]] }[];
  /** Per point, its claim-latency bucket counts summed across job types. */
  latency: [number, number[]][];
  /** Uncaught violations per point, job type and constraint. */
  violations: { b: number; job_type: string; constraint_name: string; n: number }[];
}

/** The rules' inputs (see alerts()): the rollups' part, and reconciliation's from the console's tables. */
export interface AlertInputs {
  violations: { job_type: string; constraint_name: string; n: number }[];
  redeliveries: { minute: number; job_type: string; redeliveries: number; suppressed: number }[];
  key_reuse: { job_type: string; n: number }[];
  late: { job_type: string; n: number }[];
  findings: { provider: string; kind: string; n: number; age: number }[];
  failed_runs: { provider: string; n: number }[];
}

/** The instants the alert rules look back to, each a whole minute: now, 10, 46, 30 and 15 minutes and a day ago. */
export function alertWindows(now: Date) {
  const minute = (ms: number) => new Date(Math.floor((now.getTime() - ms) / 60_000) * 60_000);
  return {
    now,
    tenMinutes: minute(10 * 60_000),
    fortySixMinutes: minute(46 * 60_000),
    thirtyMinutes: minute(30 * 60_000),
    fifteenMinutes: minute(15 * 60_000),
    day: minute(24 * 3_600_000),
  };
}

/** The gap bucket (0-based) from which a redelivery is "late" for OnceboardLateDuplicates: above 2 days. */
export const LATE_GAP_BUCKET = 11;

const zeros = (n: number) => new Array<number>(n).fill(0);

/** The rollups as the Overview's source: an engine gives its statements' rows, the rest is here. */
export abstract class RollupsSource implements MetricsSource {
  abstract readonly name: MetricsSourceName;
  protected abstract seriesRows(query: SeriesQuery): Promise<SeriesRows>;
  protected abstract alertInputs(now: Date): Promise<AlertInputs>;

  async series(query: SeriesQuery): Promise<SourceResult> {
    return toSourceResult(query.buckets, await this.seriesRows(query));
  }

  /** The rules of deploy/alerts.yml evaluated over the minute rollups at `now` (see each rule's comment). */
  async alerts(now: Date): Promise<AlertStatus[]> {
    return evaluateAlerts(await this.alertInputs(now), now);
  }
}

function toSourceResult(buckets: Buckets, rows: SeriesRows): SourceResult {
  const n = buckets.timestamps.length;
  const claims = zeros(n);
  const inFlight = zeros(n);
  const takeovers = zeros(n);
  const activity = new Map<string, FleetJobTypeActivity>();
  for (const r of rows.stats) {
    if (r.job_type === null) {
      if (r.i === null || r.i < 0 || r.i >= n) continue;
      claims[r.i] = r.claims;
      inFlight[r.i] = r.in_flight;
      takeovers[r.i] = r.takeovers;
      continue;
    }
    activity.set(r.job_type, {
      jobType: r.job_type,
      deliveries: r.deliveries,
      redeliveries: r.redeliveries,
      suppressions: r.suppressed,
      claims: r.claims,
      uncaughtViolations: 0,
      notWiredUp: false,
    });
  }
  const suppressionSeries: Series[] = rows.lines.map((r) => {
    const values = zeros(n);
    const [points, counts] = r.points;
    points.forEach((i, k) => {
      if (i >= 0 && i < n) values[i] = counts[k] ?? 0;
    });
    return { name: r.job_type, values };
  });

  const histograms: number[][] = Array.from({ length: n }, () => []);
  for (const [i, c] of rows.latency) if (i >= 0 && i < n) histograms[i] = c;

  const violationLines = new Map<string, ViolationSeries>();
  for (const r of rows.violations) {
    if (r.b < 0 || r.b >= n) continue;
    addToViolationLine(violationLines, r, r.b, r.n, n);
    // From the violations table, like the chart and the tile, so the three always agree.
    const a = activity.get(r.job_type);
    if (a) a.uncaughtViolations += r.n;
    else
      activity.set(r.job_type, {
        jobType: r.job_type,
        deliveries: 0,
        redeliveries: 0,
        suppressions: 0,
        claims: 0,
        uncaughtViolations: r.n,
        notWiredUp: false,
      });
  }

  const jobTypes = [...activity.values()]
    .map((a) => ({ ...a, notWiredUp: notWiredUp(a.redeliveries, a.suppressions) }))
    .sort((a, b) => b.deliveries - a.deliveries || b.claims - a.claims || a.jobType.localeCompare(b.jobType));
  suppressionSeries.sort((a, b) => a.name.localeCompare(b.name));

  return {
    jobTypes,
    series: {
      stepSeconds: buckets.stepSeconds,
      timestamps: buckets.timestamps,
      suppressionBuckets: { stepSeconds: buckets.stepSeconds, timestamps: buckets.timestamps },
      suppressions: suppressionSeries,
      violations: [...violationLines.values()].sort((a, b) => a.name.localeCompare(b.name)),
      claimRate: perSecond(claims, buckets.stepSeconds),
      latencyP50: histograms.map((h) => histogramQuantile(0.5, CLAIM_DURATION_BOUNDS, h)),
      latencyP99: histograms.map((h) => histogramQuantile(0.99, CLAIM_DURATION_BOUNDS, h)),
      inFlight,
      takeovers,
    },
  };
}

function evaluateAlerts(inputs: AlertInputs, now: Date): AlertStatus[] {
  const notSuppressed = evaluateNotSuppressed(
    inputs.redeliveries.map((r) => ({
      minute: r.minute,
      jobType: r.job_type,
      redeliveries: r.redeliveries,
      suppressed: r.suppressed,
    })),
    now,
  );

  return ALERT_RULES.map((rule) => {
    const base = { name: rule.name, severity: rule.severity, summary: rule.summary, runbook: runbookHref(rule.name) };
    switch (rule.name) {
      case "OnceboardUncaughtUniqueViolation": {
        const instances = inputs.violations.map((r) => ({
          labels: { job_type: r.job_type, constraint: r.constraint_name },
          state: "firing" as const,
          value: r.n,
        }));
        return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
      }
      case "OnceboardRedeliveriesNotSuppressed": {
        const state = notSuppressed.some((i) => i.state === "firing")
          ? "firing"
          : notSuppressed.length > 0
            ? "pending"
            : "inactive";
        return { ...base, state, instances: notSuppressed };
      }
      case "OnceboardKeyReuse": {
        const instances = inputs.key_reuse.map((r) => ({
          labels: { job_type: r.job_type },
          state: "firing" as const,
          value: r.n,
        }));
        return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
      }
      case "OnceboardLateDuplicates": {
        const instances = inputs.late.map((r) => ({
          labels: { job_type: r.job_type },
          state: "firing" as const,
          value: r.n,
        }));
        return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
      }
      case "OnceboardProviderDuplicateCharge": {
        const instances = inputs.findings
          .filter((f) => f.kind === "duplicated_at_provider")
          .map((f) => ({ labels: { provider: f.provider }, state: "firing" as const, value: f.n }));
        return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
      }
      case "OnceboardReconcileFindings": {
        // for: 1h — an instance fires once its oldest open finding is an hour old, pending before.
        const instances = inputs.findings
          .filter((f) => f.kind !== "duplicated_at_provider")
          .map((f) => ({
            labels: { provider: f.provider, kind: f.kind },
            state: f.age >= 3600 ? ("firing" as const) : ("pending" as const),
            value: f.n,
          }));
        const state = instances.some((i) => i.state === "firing") ? "firing" : instances.length > 0 ? "pending" : "inactive";
        return { ...base, state, instances };
      }
      case "OnceboardReconcileFailing": {
        const instances = inputs.failed_runs.map((r) => ({
          labels: { provider: r.provider },
          state: "firing" as const,
          value: r.n,
        }));
        return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
      }
      default:
        return {
          ...base,
          state: "unknown",
          instances: [],
          note: "Only Prometheus sees this: a failing flush writes no rollup. Set PROMETHEUS_URL to evaluate it.",
        };
    }
  });
}

/**
 * OnceboardRedeliveriesNotSuppressed over minute rollups: at each minute m of the last 16, the
 * condition is redeliveries in (m-30m, m] > 20 and suppressions there = 0. True at every one of
 * them → firing (held for 15 m); true now only → pending.
 */
function evaluateNotSuppressed(
  rows: { minute: number; jobType: string; redeliveries: number; suppressed: number }[],
  now: Date,
): AlertStatus["instances"] {
  const nowMinute = Math.floor(now.getTime() / 60_000) * 60_000;
  const byType = new Map<string, typeof rows>();
  for (const r of rows) {
    const list = byType.get(r.jobType);
    if (list) list.push(r);
    else byType.set(r.jobType, [r]);
  }
  const out: AlertStatus["instances"] = [];
  for (const [jobType, list] of byType) {
    const holds = (m: number) => {
      let redelivered = 0;
      let suppressed = 0;
      for (const r of list) {
        if (r.minute > m - 30 * 60_000 && r.minute <= m) {
          redelivered += r.redeliveries;
          suppressed += r.suppressed;
        }
      }
      return { ok: redelivered > 20 && suppressed === 0, redelivered };
    };
    const current = holds(nowMinute);
    if (!current.ok) continue;
    let held = true;
    for (let k = 1; k <= 15 && held; k++) held = holds(nowMinute - k * 60_000).ok;
    out.push({ labels: { job_type: jobType }, state: held ? "firing" : "pending", value: current.redelivered });
  }
  return out;
}
