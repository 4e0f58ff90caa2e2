import type { OverviewQuery } from "./contract";
import { DEFAULT_OVERVIEW_RANGE, type OverviewRange, RANGE_SECONDS } from "./overview-types";

export type { OverviewQuery };

interface ResolvedRange {
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
