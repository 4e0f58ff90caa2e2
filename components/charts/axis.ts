/**
 * What every chart's axes share: the label style (a name and its unit beside the ticks) and the
 * ticks of a log axis. A log or symlog axis says so in its label, and its ticks are the powers of
 * ten a person reads at a glance (0, 1, 10, 100, 1,000), not the linear ticks d3 gives a symlog
 * scale (0 / 2,000 / 10,000, with everything below 2,000 squeezed into one unlabelled band).
 */

/** Recharts' label props for an axis's name, in the muted text colour of the ticks. */
export const AXIS_LABEL_STYLE = { fill: "var(--text-muted)", fontSize: 11 } as const;

/** Recharts' tick props: muted, small. */
export const AXIS_TICK_STYLE = { fill: "var(--text-muted)", fontSize: 11 } as const;

/** The label of a log-scaled axis: what it measures, and that it is on a log scale. */
export const logAxisLabel = (what: string) => `${what} (log scale)`;

/**
 * Ticks of a symlog count axis holding values up to `max`: 0, then every power of ten up to the
 * first one at or above `max` (which is also the top of the axis, so the tallest bar sits below a
 * labelled line). `[0, 1]` when there is nothing to show.
 */
export function countLogTicks(max: number): number[] {
  const ticks = [0, 1];
  while ((ticks.at(-1) ?? 1) < max) ticks.push((ticks.at(-1) ?? 1) * 10);
  return ticks;
}
