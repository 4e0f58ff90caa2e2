"use client";

import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import type { GapDay } from "@/lib/features/retention-and-gaps/gaps-contract";
import { formatDuration, formatUtcDay } from "@/lib/format";
import { AXIS_LABEL_STYLE, AXIS_TICK_STYLE, logAxisLabel } from "../charts/axis";

/** The axes' names: a day of UTC along, the gap on a log scale up. */
export const GAPS_OVER_TIME_AXES = { x: "day (UTC)", y: logAxisLabel("gap") } as const;

const TICKS = [1, 60, 3600, 86_400, 604_800, 2_592_000];

/** p99 and max gap per UTC day on a log axis: a broker's changed retry policy shows up as a step. */
export function GapsOverTime({ daily, retentionSeconds }: { daily: GapDay[]; retentionSeconds: number }) {
  const data = daily.map((d) => ({
    day: formatUtcDay(d.day),
    p99: d.p99 && d.p99 > 0 ? d.p99 : null,
    max: d.maxAtMost ?? (d.maxAtLeast ? d.maxAtLeast * 2 : null),
  }));
  return (
    <figure
      className="chart"
      aria-label={`p99 and maximum gap per day (UTC). ${data.map((d) => `${d.day}: p99 ${formatDuration(d.p99)}, max ${formatDuration(d.max)}`).join("; ")}`}
      data-testid="gaps-over-time"
    >
      <LineChart
        responsive
        data={data}
        style={{ width: "100%", height: 240 }}
        margin={{ top: 8, right: 16, bottom: 18, left: 8 }}
      >
        <CartesianGrid stroke="var(--grid)" vertical={false} />
        <XAxis
          dataKey="day"
          tick={AXIS_TICK_STYLE}
          stroke="var(--border)"
          minTickGap={16}
          label={{ value: GAPS_OVER_TIME_AXES.x, position: "bottom", offset: 2, ...AXIS_LABEL_STYLE }}
        />
        <YAxis
          scale="log"
          domain={[0.5, 2_592_000 * 2]}
          ticks={TICKS}
          tickFormatter={(v: number) => formatDuration(v)}
          allowDataOverflow
          width={60}
          tick={AXIS_TICK_STYLE}
          stroke="var(--border)"
          label={{
            value: GAPS_OVER_TIME_AXES.y,
            angle: -90,
            position: "insideLeft",
            offset: -2,
            style: { textAnchor: "middle" },
            ...AXIS_LABEL_STYLE,
          }}
        />
        <Tooltip
          isAnimationActive={false}
          formatter={(value) => formatDuration(typeof value === "number" ? value : null)}
          contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
        />
        <Legend wrapperStyle={{ fontSize: 12, paddingTop: 14 }} />
        <ReferenceLine y={retentionSeconds} stroke="var(--danger)" strokeDasharray="4 3" />
        <Line dataKey="p99" name="p99" stroke="var(--chart-accent)" dot={false} isAnimationActive={false} connectNulls />
        <Line
          dataKey="max"
          name="max (bucket bound)"
          stroke="var(--warning)"
          dot={false}
          isAnimationActive={false}
          type="stepAfter"
          connectNulls
        />
      </LineChart>
    </figure>
  );
}
