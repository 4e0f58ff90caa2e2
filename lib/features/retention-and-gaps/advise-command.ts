import { parseArgs } from "node:util";
import pg from "pg";
import { loadConfig } from "../../config";
import { consolePoolConfig } from "../../db/pool";
import { formatCountOf, formatDuration } from "../../format";
import { toAdviceOptions } from "./advice-query";
import { getRetentionAdvice } from "./advise-retention";
import type { Advice } from "./contract";
import { adviceQuery } from "./contract";

const USAGE =
  "usage: npm run retention -- advise [--window <days>] [--basis p90|p99|p99.9|max] [--safety-factor <n>] [--dead-letter-dwell <seconds>] [--min-samples <n>] [--job-type <name>] [--json]";

interface AdviseCommandDeps {
  /** Opens the database (default: DATABASE_URL or the running embedded server, as the demo commands do). */
  open?: () => Promise<{ url: string; stop(): Promise<void> }>;
  out?: (line: string) => void;
  err?: (line: string) => void;
  now?: Date;
}

/** The advice as text lines: what the page shows, for a terminal. */
function formatAdvice(advice: Advice): string[] {
  const c = advice.comparison;
  const i = advice.inputs;
  const lines = [
    `window ${i.from} .. ${i.to}; basis ${i.basis} × ${i.safetyFactor}${i.deadLetterDwellSeconds ? ` + ${formatDuration(i.deadLetterDwellSeconds)} dead-letter dwell` : ""}; partitions of ${formatDuration(i.partitionSeconds)}`,
    `current retention ${formatDuration(i.retentionSeconds)}; largest declared retry window ${formatDuration(i.maxRetryWindowSeconds)} (${i.maxRetryWindowSource})`,
  ];
  for (const j of advice.jobTypes) {
    lines.push(
      `  ${j.jobType}: ${formatCountOf(j.samples, "gap")}, ${j.basisUsed} ${formatDuration(j.basisSeconds)} → ${formatDuration(j.candidateSeconds)}${j.overflow ? `, ${j.overflow} beyond the top bucket` : ""}${j.note ? ` (${j.note})` : ""}`,
    );
  }
  for (const reason of advice.reasons) lines.push(reason);
  lines.push(`${c.verdict === "below_observed_max" ? "RED: " : ""}${c.message}`);
  if (c.observedMaxSource) lines.push(`longest observed gap: ${c.observedMaxSource}`);
  if (c.claimsBeyondRetention > 0)
    lines.push(`${formatCountOf(c.claimsBeyondRetention, "claim")} of deliveries published before the retention`);
  lines.push(
    `advice status=${advice.status} recommended_days=${advice.recommendedSeconds === null ? "none" : advice.recommendedSeconds / 86_400} retention_days=${i.retentionSeconds / 86_400} verdict=${c.verdict} late=${c.lateDuplicates}${advice.refusals.length ? ` refused=${advice.refusals.map((r) => r.code).join(",")}` : ""}`,
  );
  return lines;
}

/**
 * `npm run retention -- advise`: prints the same recommendation, inputs and reasons as
 * GET /api/v1/retention/advice. Exit code 0 when recommended, 2 when the advisor refused, 1 on a
 * usage or database error.
 */
export async function runAdviseCommand(args: string[], deps: AdviseCommandDeps = {}): Promise<number> {
  const out = deps.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const err = deps.err ?? ((line: string) => process.stderr.write(`${line}\n`));
  let options: ReturnType<typeof toAdviceOptions>;
  let json = false;
  try {
    const { values } = parseArgs({
      args,
      strict: true,
      options: {
        window: { type: "string" },
        basis: { type: "string" },
        "safety-factor": { type: "string" },
        "dead-letter-dwell": { type: "string" },
        "min-samples": { type: "string" },
        "job-type": { type: "string" },
        json: { type: "boolean" },
      },
    });
    json = values.json ?? false;
    const params = new URLSearchParams();
    const set = (name: string, value: string | undefined) => value !== undefined && params.set(name, value);
    set("window", values.window?.replace(/d$/, ""));
    set("basis", values.basis);
    set("safetyFactor", values["safety-factor"]);
    set("deadLetterDwell", values["dead-letter-dwell"]);
    set("minSamples", values["min-samples"]);
    set("jobType", values["job-type"]);
    const raw = Object.fromEntries(params);
    const parsed = adviceQuery.safeParse(raw);
    if (!parsed.success) {
      throw new Error(parsed.error.issues.map((issue) => `${issue.path.join(".") || "(options)"} ${issue.message}`).join("; "));
    }
    options = toAdviceOptions(parsed.data);
  } catch (error) {
    err(`onceboard: ${error instanceof Error ? error.message : String(error)}`);
    err(USAGE);
    return 1;
  }
  const open =
    deps.open ??
    (async () => {
      const { openDatabase } = await import("../../db/provision");
      return openDatabase();
    });
  let db: Awaited<ReturnType<typeof open>> | undefined;
  const client = { current: undefined as pg.Pool | undefined };
  try {
    db = await open();
    // A pool: the loader runs its three reads at once. Configured as the console's (its SQL names
    // tables unqualified), whatever the URL carries.
    client.current = new pg.Pool(
      consolePoolConfig({
        connectionString: db.url,
        schema: loadConfig().ONCEBOARD_SCHEMA,
        statementTimeoutMs: null,
        max: 3,
        application_name: "onceboard-retention-advise",
      }),
    );
    const advice = await getRetentionAdvice(client.current, { ...options, now: deps.now });
    if (json) out(JSON.stringify(advice, null, 2));
    else for (const line of formatAdvice(advice)) out(line);
    return advice.status === "recommended" ? 0 : 2;
  } catch (error) {
    err(`onceboard: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await client.current?.end().catch(() => {});
    await db?.stop().catch(() => {});
  }
}
