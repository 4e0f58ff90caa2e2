"use client";

import { useEffect, useState } from "react";
import { Area, AreaChart, Bar, BarChart, CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import type { Series } from "@/lib/features/overview/contract";
import { formatMeasure, formatUtc, formatUtcTick } from "@/lib/format";

/** Series colours: CSS variables with light and dark values (app/globals.css, --series-N). */
const seriesColor = (i: number) => `var(--series-${(i % 8) + 1})`;

interface TimeSeriesChartProps {
  id: string;
  title: string;
  /** Axis unit, e.g. "per 2 min", "claims/s", "ms". */
  unit: string;
  timestamps: number[];
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
 * A time series with axis units, a legend and a tooltip (times in UTC). Colours come from CSS
 * variables, so the chart follows the light and dark themes; it fills its container's width.
 */
export function TimeSeriesChart({
  id,
  title,
  unit,
  timestamps,
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
    margin: { top: 8, right: 12, bottom: 0, left: 0 },
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
        tick={{ fill: "var(--text-muted)", fontSize: 11 }}
        stroke="var(--border)"
        minTickGap={40}
      />
      <YAxis
        width={64}
        tick={{ fill: "var(--text-muted)", fontSize: 11 }}
        stroke="var(--border)"
        tickFormatter={(v: number) => fmt(v)}
        label={{ value: unit, angle: -90, position: "insideLeft", fill: "var(--text-muted)", fontSize: 11, dx: 8, dy: 30 }}
      />
      <Tooltip
        isAnimationActive={false}
        labelFormatter={(t) => formatUtc(Number(t), { seconds: false })}
        formatter={(value) => (typeof value === "number" ? `${fmt(value)} ${unit}` : "–")}
        contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
      />
      <Legend wrapperStyle={{ fontSize: 12, color: "var(--text-muted)" }} />
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
