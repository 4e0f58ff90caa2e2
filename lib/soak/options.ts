import { parseArgs } from "node:util";

/** Everything `npm run soak` can be told; the defaults are the soak's specification (docs/soak.md). */
export interface SoakOptions {
  /** Messages published to the broker: orders plus their duplicates. */
  deliveries: number;
  /** Share of the deliveries that are duplicates (concurrent, re-published, late), 0–0.9. */
  duplicates: number;
  /** Share of handler runs killed with SIGKILL (every run in flight in a killed worker). */
  kills: number;
  /** Worker processes. */
  workers: number;
  /** Handler runs in flight per worker process (pg-boss batch fetch keeps it full). */
  concurrency: number;
  /** Write the full result as JSON here. */
  report?: string;
  /** Keep PostgreSQL's synchronous commit (default: off for the soak's database, see database.ts). */
  synchronousCommit: boolean;
  /** Keep the soak's database (and the embedded server's directory) afterwards. */
  keep: boolean;
}

export const USAGE =
  "usage: npm run soak [-- --deliveries <n>] [--duplicates <0..0.9>] [--kills <0..0.5>] [--workers <1..8>] [--concurrency <1..64>] [--report <file.json>] [--keep] [--synchronous-commit]";

export class SoakUsageError extends Error {
  readonly code = "SOAK_USAGE";
}

function integer(flag: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw.trim().replaceAll("_", ""))) {
    throw new SoakUsageError(`--${flag} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw)})`);
  }
  const n = Number(raw.trim().replaceAll("_", ""));
  if (n < min || n > max) throw new SoakUsageError(`--${flag} must be from ${min} to ${max} (got ${n})`);
  return n;
}

function share(flag: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n < 0 || n > max) {
    throw new SoakUsageError(`--${flag} must be a number from 0 to ${max} (got ${JSON.stringify(raw)})`);
  }
  return n;
}

/** Parses the command line; anything wrong is one SoakUsageError naming the flag. */
export function parseSoakArgs(args: string[]): SoakOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args,
      options: {
        deliveries: { type: "string" },
        duplicates: { type: "string" },
        kills: { type: "string" },
        workers: { type: "string" },
        concurrency: { type: "string" },
        report: { type: "string" },
        keep: { type: "boolean", default: false },
        "synchronous-commit": { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new SoakUsageError(error instanceof Error ? error.message : String(error));
  }
  const str = (k: string) => values[k] as string | undefined;
  return {
    deliveries: integer("deliveries", str("deliveries"), 200_000, 100, 10_000_000),
    duplicates: share("duplicates", str("duplicates"), 0.3, 0.9),
    kills: share("kills", str("kills"), 0.05, 0.5),
    workers: integer("workers", str("workers"), 2, 1, 8),
    concurrency: integer("concurrency", str("concurrency"), 32, 1, 64),
    report: str("report"),
    keep: values.keep === true,
    synchronousCommit: values["synchronous-commit"] === true,
  };
}
