"use client";

import { Bar, BarChart, CartesianGrid, LabelList, Tooltip, XAxis, YAxis } from "recharts";
import type { JobTypeOverview } from "@/lib/console/overview-types";
import { formatCount, formatPercent } from "./format";

interface Datum {
  jobType: string;
  suppressions: number;
  claims: number;
}

function ChartTooltip({ active, payload }: { active?: boolean; payload?: ReadonlyArray<{ payload?: Datum }> }) {
  const datum = payload?.[0]?.payload;
  if (!active || !datum) return null;
  const deliveries = datum.claims + datum.suppressions;
  return (
    <div className="chart-tooltip">
      <strong>{datum.jobType}</strong>
      <span>{formatCount(datum.suppressions)} duplicates suppressed</span>
      <span>{formatCount(datum.claims)} claims</span>
      {deliveries > 0 ? <span>{formatPercent(datum.suppressions / deliveries)} of deliveries were duplicates</span> : null}
    </div>
  );
}

/**
 * Duplicate suppressions by job type (horizontal bars: job-type names stay readable). A number that
 * is not zero proves the mechanism is doing work; zero under heavy redelivery means it is not wired up.
 */
export function SuppressionsChart({ jobTypes }: { jobTypes: JobTypeOverview[] }) {
  const data: Datum[] = [...jobTypes]
    .sort((a, b) => b.duplicateSuppressions - a.duplicateSuppressions || a.jobType.localeCompare(b.jobType))
    .map((j) => ({ jobType: j.jobType, suppressions: j.duplicateSuppressions, claims: j.claims }));
  const total = data.reduce((sum, d) => sum + d.suppressions, 0);
  const summary = data.map((d) => `${d.jobType}: ${d.suppressions}`).join(", ");
  return (
    <section className="panel" aria-labelledby="suppressions-heading">
      <div className="panel-header">
        <h2 id="suppressions-heading">Duplicate suppressions by job type</h2>
        <span className="panel-meta">{formatCount(total)} total</span>
      </div>
      <figure className="chart" aria-label={`Duplicate suppressions by job type. ${summary}`} data-testid="suppressions-chart">
        <BarChart
          responsive
          layout="vertical"
          data={data}
          style={{ width: "100%", height: Math.max(140, data.length * 36 + 36) }}
          margin={{ top: 4, right: 40, bottom: 4, left: 4 }}
          barCategoryGap="22%"
        >
          <CartesianGrid horizontal={false} stroke="var(--grid)" />
          <XAxis
            type="number"
            allowDecimals={false}
            tick={{ fill: "var(--text-muted)", fontSize: 12 }}
            stroke="var(--border)"
            tickLine={false}
          />
          <YAxis
            type="category"
            dataKey="jobType"
            width={140}
            tick={{ fill: "var(--text)", fontSize: 12 }}
            stroke="var(--border)"
            tickLine={false}
            interval={0}
          />
          <Tooltip content={ChartTooltip} cursor={{ fill: "var(--hover)" }} isAnimationActive={false} />
          <Bar
            dataKey="suppressions"
            name="Duplicate suppressions"
            fill="var(--chart-accent)"
            radius={[0, 3, 3, 0]}
            maxBarSize={22}
          >
            <LabelList dataKey="suppressions" position="right" fill="var(--text-muted)" fontSize={12} />
          </Bar>
        </BarChart>
      </figure>
    </section>
  );
}
