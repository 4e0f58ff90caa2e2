import type { z } from "zod";
import { parseSearchParams } from "../../api/parse";
import { gapsQuery } from "./gaps-contract";
import { DEFAULT_GAP_RANGE, GAP_RANGE_SECONDS, type GapRange } from "./gaps-types";

export interface GapsQuery {
  range: GapRange | "custom";
  from: Date;
  to: Date;
  jobType: string | null;
  tenant: string | null;
}

/** The query of the API and the page alike (one schema, so an invalid value reads the same in both), with its range resolved. */
export function parseGapsQuery(input: URL | URLSearchParams | string, now = new Date()): GapsQuery {
  return resolveGapsQuery(parseSearchParams(gapsQuery, input), now);
}

/** The contract's parsed query with its range resolved to times (a declared route parses, then resolves). */
export function resolveGapsQuery(q: z.output<typeof gapsQuery>, now = new Date()): GapsQuery {
  if (q.from && q.to) {
    return { range: "custom", from: new Date(q.from), to: new Date(q.to), jobType: q.jobType ?? null, tenant: q.tenant ?? null };
  }
  const range = q.range ?? DEFAULT_GAP_RANGE;
  return {
    range,
    from: new Date(now.getTime() - GAP_RANGE_SECONDS[range] * 1000),
    to: now,
    jobType: q.jobType ?? null,
    tenant: q.tenant ?? null,
  };
}
