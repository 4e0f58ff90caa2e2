import { z } from "zod";
import { parseSearchParams } from "./parse";

/** Maintenance runs the Retention page lists by default, and at most. */
export const DEFAULT_RETENTION_RUNS = 20;
export const MAX_RETENTION_RUNS = 200;

/**
 * ?runs= (1-200, default 20): how many maintenance runs to list, newest first. The API and the page
 * parse with this one schema, so an invalid value gets the same message in both.
 */
const schema = z.object({
  runs: z.coerce.number().int().min(1).max(MAX_RETENTION_RUNS).optional(),
});

export interface RetentionQuery {
  runs: number;
}

export function parseRetentionQuery(input: URL | URLSearchParams | string): RetentionQuery {
  const q = parseSearchParams(schema, input);
  return { runs: q.runs ?? DEFAULT_RETENTION_RUNS };
}
