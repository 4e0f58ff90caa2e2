"use client";

import { useEffect, useState } from "react";
import { Area, AreaChart, Bar, BarChart, CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import type { Series, SeriesBuckets } from "@/lib/features/overview/contract";
import { formatDuration, formatMeasure, formatUtc, formatUtcTick } from "@/lib/format";
import { AXIS_LABEL_STYLE, AXIS_TICK_STYLE } from "../charts/axis";

/** Series colours: CSS variables with light and dark values (app/globals.css, --series-N). */
const seriesColor = (i: number) => `var(--series-${(i % 8) + 1})`;

/** The time axis's name: every time on the console is UTC. */
export const TIME_AXIS_LABEL = "time (UTC)";

/**
 * What a chart's values are: counts of something per bucket ("suppressions" → "suppressions per
 * 10 min", the width of the buckets the values were counted in, never another), or a measure in a
 * unit of its own ("claims/s", "ms").
 */
export type ChartMeasure = { counts: string } | { unit: string };

/** The value axis's label: for counts, the noun and the width of the buckets they were counted in. */
export function measureLabel(measure: ChartMeasure, stepSeconds: number): string {
  return "counts" in measure ? `${measure.counts} per ${formatDuration(stepSeconds)}` : measure.unit;
}

interface TimeSeriesChartProps {
  id: string;
  title: string;
  /** The buckets the values were counted in: their timestamps, and their width (the unit of a count). */
  buckets: SeriesBuckets;
  measure: ChartMeasure;
  series: Series[];
  kind: "stacked-area" | "line" | "bar";
  format?: (value: number) => string;
  /** Shown instead of the chart when every value is zero or missing. */
  emptyText?: string;
  tone?: "danger";
  /** Whose events these are, when a filter asked for a tenant the series cannot narrow to (e.g. "all tenants"). */
  scope?: string;
}

/**
 * A time series with both axes named (time in UTC; the values with their unit, a count with the
 * width of its buckets), a legend and a tooltip. Colours come from CSS variables, so the chart
 * follows the light and dark themes; it fills its container's width.
 */
export function TimeSeriesChart({
  id,
  title,
  buckets,
  measure,
  series,
  kind,
  format,
  emptyText,
  tone,
  scope,
}: TimeSeriesChartProps) {
  // Measured in the browser: the server has no width, and a chart hydrated from server HTML never sizes itself.
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  const fmt = format ?? formatMeasure;
  const { timestamps } = buckets;
  const unit = measureLabel(measure, buckets.stepSeconds);
  const spanDays = timestamps.length > 1 ? ((timestamps[timestamps.length - 1] ?? 0) - (timestamps[0] ?? 0)) / 86_400_000 : 0;
  const data = timestamps.map((t, i) => {
    const row: Record<string, number | null> = { t };
    series.forEach((s, k) => {
      row[`s${k}`] = s.values[i] ?? null;
    });
    return row;
  });
  const points = series.reduce((n, s) => n + s.values.filter((v) => v !== null && v !== 0).length, 0);
  const common = {
    data,
    style: { width: "100%", height: 220 },
    margin: { top: 8, right: 12, bottom: 14, left: 8 },
    responsive: true,
  };
  const axes = (
    <>
      <CartesianGrid stroke="var(--grid)" vertical={false} />
      <XAxis
        dataKey="t"
        type="number"
        scale="time"
        domain={["dataMin", "dataMax"]}
        tickFormatter={(t: number) => formatUtcTick(t, { withDate: spanDays > 1 })}
        tick={AXIS_TICK_STYLE}
        stroke="var(--border)"
        minTickGap={40}
        label={{ value: TIME_AXIS_LABEL, position: "bottom", offset: 0, ...AXIS_LABEL_STYLE }}
      />
      <YAxis
        width={64}
        tick={AXIS_TICK_STYLE}
        stroke="var(--border)"
        tickFormatter={(v: number) => fmt(v)}
        label={{
          value: unit,
          angle: -90,
          position: "insideLeft",
          offset: -2,
          style: { textAnchor: "middle" },
          ...AXIS_LABEL_STYLE,
        }}
      />
      <Tooltip
        isAnimationActive={false}
        labelFormatter={(t) => formatUtc(Number(t), { seconds: false })}
        formatter={(value) => (typeof value === "number" ? `${fmt(value)} ${unit}` : "–")}
        contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
      />
      <Legend wrapperStyle={{ fontSize: 12, color: "var(--text-muted)", paddingTop: 12 }} />
    </>
  );
  let chart: React.ReactNode;
  if (kind === "stacked-area") {
    chart = (
      <AreaChart {...common}>
        {axes}
        {series.map((s, k) => (
          <Area
            key={s.name}
            dataKey={`s${k}`}
            name={s.name}
            stackId="1"
            type="stepAfter"
            stroke={seriesColor(k)}
            fill={seriesColor(k)}
            fillOpacity={0.35}
            isAnimationActive={false}
          />
        ))}
      </AreaChart>
    );
  } else if (kind === "bar") {
    chart = (
      <BarChart {...common}>
        {axes}
        {series.map((s, k) => (
          <Bar
            key={s.name}
            dataKey={`s${k}`}
            name={s.name}
            stackId="1"
            fill={tone === "danger" && k === 0 ? "var(--danger)" : seriesColor(k)}
            isAnimationActive={false}
          />
        ))}
      </BarChart>
    );
  } else {
    chart = (
      <LineChart {...common}>
        {axes}
        {series.map((s, k) => (
          <Line
            key={s.name}
            dataKey={`s${k}`}
            name={s.name}
            type="monotone"
            dot={{ r: 2 }}
            stroke={seriesColor(k)}
            strokeWidth={2}
            connectNulls={false}
            isAnimationActive={false}
          />
        ))}
      </LineChart>
    );
  }
  return (
    <section className="panel" aria-labelledby={`${id}-heading`}>
      <div className="panel-header">
        <h2 id={`${id}-heading`}>{title}</h2>
        <span className="panel-meta" data-testid={`chart-${id}-meta`}>
          {unit}
          {scope ? ` · ${scope}` : ""}
        </span>
      </div>
      <figure
        className="chart"
        data-mounted={mounted ? "yes" : "no"}
        data-testid={`chart-${id}`}
        data-points={points}
        data-step-seconds={buckets.stepSeconds}
        aria-label={`${title}: ${series.map((s) => s.name).join(", ")}`}
      >
        {points === 0 && emptyText ? (
          <p className="chart-empty muted">{emptyText}</p>
        ) : mounted ? (
          chart
        ) : (
          <div style={{ height: 220 }} />
        )}
      </figure>
    </section>
  );
}
