"use client";

import { CartesianGrid, Legend, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import type { GapDay } from "@/lib/features/retention-and-gaps/gaps-contract";
import { formatDuration, formatUtcDay } from "@/lib/format";

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
      <LineChart responsive data={data} style={{ width: "100%", height: 220 }} margin={{ top: 8, right: 16, bottom: 4, left: 0 }}>
        <CartesianGrid stroke="var(--grid)" vertical={false} />
        <XAxis dataKey="day" tick={{ fill: "var(--text-muted)", fontSize: 12 }} stroke="var(--border)" minTickGap={16} />
        <YAxis
          scale="log"
          domain={[0.5, 2_592_000 * 2]}
          ticks={TICKS}
          tickFormatter={(v: number) => formatDuration(v)}
          allowDataOverflow
          width={52}
          tick={{ fill: "var(--text-muted)", fontSize: 12 }}
          stroke="var(--border)"
        />
        <Tooltip
          isAnimationActive={false}
          formatter={(value) => formatDuration(typeof value === "number" ? value : null)}
          contentStyle={{ background: "var(--surface)", border: "1px solid var(--border)", color: "var(--text)" }}
        />
        <Legend wrapperStyle={{ fontSize: 12 }} />
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
