import { z } from "zod";
import { DEFAULT_GAP_RANGE, GAP_RANGE_SECONDS, GAP_RANGES, type GapRange, MAX_GAP_SPAN_SECONDS } from "../console/gaps-types";
import { isoTime, safeText } from "../fields";
import { parseSearchParams } from "./parse";

/**
 * ?range=1h|6h|24h|7d|30d (default 30d), or ?from=&to= (ISO 8601, both, at most 90 days apart);
 * ?jobType=, ?tenant=. The API and the page parse with this one schema, so an invalid value gets
 * the same message in both.
 */
const schema = z
  .object({
    range: z.enum(GAP_RANGES).optional(),
    from: isoTime.optional(),
    to: isoTime.optional(),
    jobType: safeText(200).trim().min(1).optional(),
    tenant: safeText(200).trim().min(1).optional(),
  })
  .refine((q) => (q.from === undefined) === (q.to === undefined), { message: "from and to go together", path: ["from"] })
  .refine((q) => !(q.from && q.range), { message: "give either range or from/to", path: ["range"] })
  .refine((q) => !q.from || !q.to || Date.parse(q.from) < Date.parse(q.to), { message: "must be before to", path: ["from"] })
  .refine((q) => !q.from || !q.to || Date.parse(q.to) - Date.parse(q.from) <= MAX_GAP_SPAN_SECONDS * 1000, {
    message: "from/to may span at most 90 days",
    path: ["to"],
  });

export interface GapsQuery {
  range: GapRange | "custom";
  from: Date;
  to: Date;
  jobType: string | null;
  tenant: string | null;
}

export function parseGapsQuery(input: URL | URLSearchParams | string, now = new Date()): GapsQuery {
  const q = parseSearchParams(schema, input);
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
