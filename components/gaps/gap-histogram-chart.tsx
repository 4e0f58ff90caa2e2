"use client";

import { Area, AreaChart, CartesianGrid, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import { formatCompactCount, formatCountOf, formatDuration } from "@/lib/format";
import { AXIS_LABEL_STYLE, AXIS_TICK_STYLE, countLogTicks, logAxisLabel } from "../charts/axis";

interface Point {
  x: number;
  count: number;
  label: string;
}

// Log time axis: ticks at the units people think in.
const TICKS = [1, 60, 3600, 86_400, 604_800, 2_592_000];

/** The axes' names: both are log scales, and say so. */
export const GAP_AXIS_LABEL = logAxisLabel("gap since the first claim");
export const DUPLICATES_AXIS_LABEL = logAxisLabel("duplicates");

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
 * late gaps visible next to the millions of fast ones; its ticks are the powers of ten up to the tallest bucket, and both axes
 * are named with their scale.
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
  const countTicks = countLogTicks(Math.max(0, ...buckets));
  const summary = buckets
    .map((n, i) => (n > 0 ? `${bucketLabel(bounds, i)}: ${n}` : null))
    .filter(Boolean)
    .join(", ");
  return (
    <figure className="chart" aria-label={`${title}. ${summary || "no gaps"}`} data-testid={testId}>
      <AreaChart responsive data={data} style={{ width: "100%", height }} margin={{ top: 22, right: 16, bottom: 18, left: 8 }}>
        <CartesianGrid stroke="var(--grid)" vertical={false} />
        <XAxis
          dataKey="x"
          type="number"
          scale="log"
          domain={[LOG_FLOOR, bounds.at(-1)! * 2]}
          ticks={TICKS}
          tickFormatter={(v: number) => formatDuration(v)}
          allowDataOverflow
          tick={AXIS_TICK_STYLE}
          stroke="var(--border)"
          label={{ value: GAP_AXIS_LABEL, position: "bottom", offset: 2, ...AXIS_LABEL_STYLE }}
        />
        <YAxis
          scale="symlog"
          domain={[0, countTicks.at(-1) ?? 1]}
          ticks={countTicks}
          interval="preserveStartEnd"
          tickFormatter={(v: number) => formatCompactCount(v)}
          allowDecimals={false}
          width={56}
          tick={AXIS_TICK_STYLE}
          stroke="var(--border)"
          tickLine={false}
          label={{
            value: DUPLICATES_AXIS_LABEL,
            angle: -90,
            position: "insideLeft",
            offset: -2,
            style: { textAnchor: "middle" },
            ...AXIS_LABEL_STYLE,
          }}
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
