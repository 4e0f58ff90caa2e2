"use client";

import { Area, AreaChart, CartesianGrid, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import { formatCountOf, formatDuration } from "@/lib/format";

interface Point {
  x: number;
  count: number;
  label: string;
}

// Log time axis: ticks at the units people think in.
const TICKS = [1, 60, 3600, 86_400, 604_800, 2_592_000];

/** The first bucket starts at 0, which a log axis cannot show: draw it from 0.5 s. */
const LOG_FLOOR = 0.5;

function bucketLabel(bounds: number[], i: number): string {
  if (i === 0) return `≤ ${formatDuration(bounds[0])}`;
  if (i >= bounds.length) return `> ${formatDuration(bounds.at(-1))}`;
  return `${formatDuration(bounds[i - 1])} – ${formatDuration(bounds[i])}`;
}

function toPoints(bounds: number[], buckets: number[]): Point[] {
  const points: Point[] = buckets.map((count, i) => ({
    x: i === 0 ? LOG_FLOOR : bounds[i - 1]!,
    count,
    label: bucketLabel(bounds, i),
  }));
  // The open-ended bucket is drawn one doubling wide; the step needs a closing point.
  const last = bounds.at(-1)! * 2;
  points.push({ x: last, count: buckets.at(-1) ?? 0, label: bucketLabel(bounds, bounds.length) });
  return points;
}

function HistogramTooltip({ active, payload }: { active?: boolean; payload?: ReadonlyArray<{ payload?: Point }> }) {
  const p = payload?.[0]?.payload;
  if (!active || !p) return null;
  return (
    <div className="chart-tooltip">
      <strong>{p.label}</strong>
      <span>{formatCountOf(p.count, "duplicate")}</span>
    </div>
  );
}

/**
 * A redelivery-gap histogram as a step area on a log time axis, with the current retention and the
 * largest declared retry window as vertical reference lines, named in a key under the chart. A symlog count axis keeps the rare
 * late gaps visible next to the millions of fast ones.
 */
export function GapHistogramChart({
  title,
  bounds,
  buckets,
  retentionSeconds,
  retryWindowSeconds,
  height = 220,
  testId,
}: {
  title: string;
  bounds: number[];
  buckets: number[];
  retentionSeconds: number;
  retryWindowSeconds: number;
  height?: number;
  testId?: string;
}) {
  const data = toPoints(bounds, buckets);
  const summary = buckets
    .map((n, i) => (n > 0 ? `${bucketLabel(bounds, i)}: ${n}` : null))
    .filter(Boolean)
    .join(", ");
  return (
    <figure className="chart" aria-label={`${title}. ${summary || "no gaps"}`} data-testid={testId}>
      <AreaChart responsive data={data} style={{ width: "100%", height }} margin={{ top: 22, right: 16, bottom: 4, left: 0 }}>
        <CartesianGrid stroke="var(--grid)" vertical={false} />
        <XAxis
          dataKey="x"
          type="number"
          scale="log"
          domain={[LOG_FLOOR, bounds.at(-1)! * 2]}
          ticks={TICKS}
          tickFormatter={(v: number) => formatDuration(v)}
          allowDataOverflow
          tick={{ fill: "var(--text-muted)", fontSize: 12 }}
          stroke="var(--border)"
        />
        <YAxis
          scale="symlog"
          allowDecimals={false}
          width={48}
          tick={{ fill: "var(--text-muted)", fontSize: 12 }}
          stroke="var(--border)"
          tickLine={false}
        />
        <Tooltip content={HistogramTooltip} isAnimationActive={false} />
        <Area
          type="stepAfter"
          dataKey="count"
          name="Duplicates"
          stroke="var(--chart-accent)"
          fill="var(--chart-accent)"
          fillOpacity={0.35}
          isAnimationActive={false}
        />
        <ReferenceLine x={retryWindowSeconds} stroke="var(--warning)" strokeDasharray="4 3" className="ref-retry-window" />
        <ReferenceLine x={retentionSeconds} stroke="var(--danger)" strokeWidth={2} className="ref-retention" />
      </AreaChart>
      {/* The lines' names under the chart, not on the lines: inside a small chart's plot a label
          beside a line near the right edge is clipped, and two lines days apart overprint. */}
      <figcaption className="chart-key" data-testid="chart-key">
        <span className="chart-key-retry-window">┆ retry window {formatDuration(retryWindowSeconds)}</span>
        <span className="chart-key-retention">│ retention {formatDuration(retentionSeconds)}</span>
      </figcaption>
    </figure>
  );
}
