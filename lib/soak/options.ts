import { parseArgs } from "node:util";
import { DEMO_STORES, type DemoStore } from "../demo/settings";
import type { FaultRates } from "./fault-proxy";
import { SOAK_BROKERS, type SoakBrokerName } from "./protocol";

/** The proxy's default rates (per request; latency per chunk): about one fault of each kind per few hundred orders. */
const DEFAULT_FAULT_RATES: Omit<FaultRates, "stallMs"> = {
  replyLost: 0.002,
  resetInTransaction: 0.002,
  stall: 0.0002,
  latencyMaxMs: 2,
};

/** Everything `npm run soak` can be told; the defaults are the soak's specification (docs/soak.md). */
export interface SoakOptions {
  /** The broker the deliveries go through (default pg-boss, in the soak's database). */
  broker: SoakBrokerName;
  /**
   * Where the effects and the shop's tables are: the soak's PostgreSQL (default), or a scratch
   * database on MARIADB_URL's MariaDB through the library's MySQL store (lib/soak/mariadb.ts).
   */
  store: DemoStore;
  /** Messages published to the broker: orders plus their duplicates. */
  deliveries: number;
  /** Share of the deliveries that are duplicates (concurrent, re-published, late), 0–0.9. */
  duplicates: number;
  /** Share of handler runs killed with SIGKILL (every run in flight in a killed worker). */
  kills: number;
  /** Worker processes. */
  workers: number;
  /**
   * Share of the deliveries done when the effects store goes down (once: PostgreSQL restarted, or
   * MariaDB's restart simulated), 0.05–0.5: later than the middle the producer may finish
   * publishing first (the last window drains without it).
   */
  outageAt: number;
  /** Handler runs in flight per worker process (pg-boss batch fetch keeps it full). */
  concurrency: number;
  /** Write the full result as JSON here. */
  report?: string;
  /** Keep PostgreSQL's synchronous commit (default: off for the soak's database, see database.ts). */
  synchronousCommit: boolean;
  /** Keep the soak's database (and the embedded server's directory) afterwards. */
  keep: boolean;
  /** "proxy": every worker reaches PostgreSQL through the fault proxy (lib/soak/fault-proxy.ts). */
  faults: "none" | "proxy";
  /** The proxy's rates (the stall's length follows the lease, see run.ts). */
  faultRates: Omit<FaultRates, "stallMs">;
}

export const USAGE =
  "usage: npm run soak [-- --broker pg-boss|bullmq|rabbitmq|nats] [--store postgres|mariadb] [--deliveries <n>] [--duplicates <0..0.9>] [--kills <0..0.5>] [--workers <1..8>] [--concurrency <1..64>] [--outage-at <0.05..0.5>] [--faults none|proxy] [--fault-rates reply-lost=<0..1>,reset=<0..1>,stall=<0..1>,latency-ms=<0..100>] [--report <file.json>] [--keep] [--synchronous-commit]";

const RATE_NAMES: Record<string, { field: keyof SoakOptions["faultRates"]; max: number }> = {
  "reply-lost": { field: "replyLost", max: 1 },
  reset: { field: "resetInTransaction", max: 1 },
  stall: { field: "stall", max: 1 },
  "latency-ms": { field: "latencyMaxMs", max: 100 },
};

/** `reply-lost=0.002,reset=0.002,stall=0.0002,latency-ms=2`: any subset, the rest default. */
function faultRates(raw: string | undefined): SoakOptions["faultRates"] {
  const rates = { ...DEFAULT_FAULT_RATES };
  if (raw === undefined) return rates;
  for (const part of raw.split(",")) {
    const [name = "", value = ""] = part.split("=").map((x) => x.trim());
    const known = RATE_NAMES[name];
    if (!known) {
      throw new SoakUsageError(
        `--fault-rates: unknown rate ${JSON.stringify(name)} (known: ${Object.keys(RATE_NAMES).join(", ")})`,
      );
    }
    const n = Number(value);
    if (value === "" || !Number.isFinite(n) || n < 0 || n > known.max) {
      throw new SoakUsageError(`--fault-rates: ${name} must be a number from 0 to ${known.max} (got ${JSON.stringify(value)})`);
    }
    rates[known.field] = n;
  }
  return rates;
}

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

function outageShare(raw: string | undefined): number {
  const n = share("outage-at", raw, 0.5, 0.5);
  if (n < 0.05) throw new SoakUsageError(`--outage-at must be a number from 0.05 to 0.5 (got ${JSON.stringify(raw)})`);
  return n;
}

/** Parses the command line; anything wrong is one SoakUsageError naming the flag. */
export function parseSoakArgs(args: string[]): SoakOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args,
      options: {
        broker: { type: "string" },
        store: { type: "string" },
        deliveries: { type: "string" },
        duplicates: { type: "string" },
        kills: { type: "string" },
        workers: { type: "string" },
        "outage-at": { type: "string" },
        concurrency: { type: "string" },
        report: { type: "string" },
        keep: { type: "boolean", default: false },
        faults: { type: "string" },
        "fault-rates": { type: "string" },
        "synchronous-commit": { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new SoakUsageError(error instanceof Error ? error.message : String(error));
  }
  const str = (k: string) => values[k] as string | undefined;
  const faults = str("faults") ?? "none";
  if (faults !== "none" && faults !== "proxy") {
    throw new SoakUsageError(`--faults must be none or proxy (got ${JSON.stringify(faults)})`);
  }
  if (str("fault-rates") !== undefined && faults !== "proxy") {
    throw new SoakUsageError("--fault-rates needs --faults proxy");
  }
  const broker = str("broker") ?? "pg-boss";
  if (!(SOAK_BROKERS as readonly string[]).includes(broker)) {
    throw new SoakUsageError(`--broker must be one of ${SOAK_BROKERS.join(", ")} (got ${JSON.stringify(broker)})`);
  }
  const store = str("store") ?? "postgres";
  if (!(DEMO_STORES as readonly string[]).includes(store)) {
    throw new SoakUsageError(`--store must be one of ${DEMO_STORES.join(", ")} (got ${JSON.stringify(store)})`);
  }
  if (store === "mariadb" && faults === "proxy") {
    throw new SoakUsageError(
      "--faults proxy speaks PostgreSQL's protocol and would not stand between the workers and MariaDB: use it with --store postgres",
    );
  }
  return {
    broker: broker as SoakBrokerName,
    store: store as DemoStore,
    deliveries: integer("deliveries", str("deliveries"), 200_000, 100, 10_000_000),
    duplicates: share("duplicates", str("duplicates"), 0.3, 0.9),
    kills: share("kills", str("kills"), 0.05, 0.5),
    workers: integer("workers", str("workers"), 2, 1, 8),
    outageAt: outageShare(str("outage-at")),
    concurrency: integer("concurrency", str("concurrency"), 32, 1, 64),
    report: str("report"),
    keep: values.keep === true,
    synchronousCommit: values["synchronous-commit"] === true,
    faults,
    faultRates: faultRates(str("fault-rates")),
  };
}
