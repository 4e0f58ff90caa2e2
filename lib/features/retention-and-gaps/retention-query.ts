import { parseSearchParams } from "../../api/parse";
import { DEFAULT_RETENTION_RUNS, retentionQuery } from "./contract";

export interface RetentionQuery {
  runs: number;
}

/** ?runs= with its default: the API and the page parse with the contract's one schema. */
export function parseRetentionQuery(input: URL | URLSearchParams | string): RetentionQuery {
  const q = parseSearchParams(retentionQuery, input);
  return { runs: q.runs ?? DEFAULT_RETENTION_RUNS };
}
