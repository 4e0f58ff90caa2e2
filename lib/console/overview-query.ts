import { z } from "zod";
import { isoTime, safeText } from "../fields";
import {
  DEFAULT_CHART_WIDTH,
  DEFAULT_OVERVIEW_RANGE,
  OVERVIEW_RANGES,
  type OverviewRange,
  RANGE_SECONDS,
} from "./overview-types";

const MAX_RANGE_SECONDS = 90 * 86_400;
const name = safeText(255, 1);

/**
 * The Overview's query, for the API (GET /api/v1/overview) and the page alike, so an invalid value
 * reads the same in both: `window` (a preset) or `from` + `to` (ISO 8601), `jobType`, `tenant`,
 * and `width` (the chart's width in pixels, which sets the step).
 */
export const overviewQuerySchema = z
  .object({
    window: z.enum(OVERVIEW_RANGES).optional(),
    from: isoTime.optional(),
    to: isoTime.optional(),
    jobType: name.optional(),
    tenant: name.optional(),
    width: z.coerce.number().int().min(100).max(4000).default(DEFAULT_CHART_WIDTH),
  })
  .superRefine((q, ctx) => {
    if ((q.from === undefined) !== (q.to === undefined)) {
      ctx.addIssue({ code: "custom", path: [q.from === undefined ? "from" : "to"], message: "from and to go together" });
      return;
    }
    if (q.from !== undefined && q.window !== undefined)
      ctx.addIssue({ code: "custom", path: ["window"], message: "give either window or from/to, not both" });
    if (q.from !== undefined && q.to !== undefined) {
      const span = Date.parse(q.to) - Date.parse(q.from);
      if (span <= 0) ctx.addIssue({ code: "custom", path: ["to"], message: "must be after from" });
      else if (span > MAX_RANGE_SECONDS * 1000)
        ctx.addIssue({ code: "custom", path: ["to"], message: "range is longer than 90 days" });
    }
  });

export type OverviewQuery = z.infer<typeof overviewQuerySchema>;

export interface ResolvedRange {
  range: OverviewRange | null;
  from: Date;
  to: Date;
}

export function resolveRange(query: OverviewQuery, now: Date): ResolvedRange {
  if (query.from !== undefined && query.to !== undefined)
    return { range: null, from: new Date(query.from), to: new Date(query.to) };
  const range = query.window ?? DEFAULT_OVERVIEW_RANGE;
  return { range, from: new Date(now.getTime() - RANGE_SECONDS[range] * 1000), to: now };
}
