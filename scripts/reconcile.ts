import os from "node:os";
import pg from "pg";
import { loadConfig } from "../lib/config";
import { consolePoolConfig } from "../lib/db/pool";
import { openDatabase } from "../lib/db/provision";
import { formatCountOf } from "../lib/format";
import { adapterFor } from "../lib/reconciliation/adapters";
import { PROVIDERS_FILE_VARIABLE, reconcileProviders } from "../lib/reconciliation/providers";
import { reconcile, summaryLine } from "../lib/reconciliation/reconcile";
import { log, runMain } from "./cli";

/**
 * npm run reconcile -- --provider <name> --from <iso time> --to <iso time> [--grace-seconds N]
 * The provider is one ONCEBOARD_PROVIDERS_FILE names (docs/reconciliation.md).
 * Progress on stderr (a bar that counts pages and objects: the provider's total is not known
 * ahead); the last line on stdout: `reconcile matched=N duplicated_at_provider=N …`. Exit 1 when
 * the run failed (the reason on stderr), never a summary that reads as matched.
 */
const USAGE =
  "usage: npm run reconcile -- --provider <a name in ONCEBOARD_PROVIDERS_FILE> --from <time> --to <time> [--grace-seconds N]";

function parseArgs(args: string[]) {
  const out: { provider?: string; from?: Date; to?: Date; grace?: number } = {};
  const time = (flag: string, value: string | undefined) => {
    const date = new Date(value ?? "");
    if (Number.isNaN(date.getTime()))
      throw new Error(`${flag} needs a time like 2026-12-01T00:00:00Z, got ${value ?? "nothing"}\n${USAGE}`);
    return date;
  };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i];
    if (flag === "--provider") out.provider = args[++i];
    else if (flag === "--from") out.from = time(flag, args[++i]);
    else if (flag === "--to") out.to = time(flag, args[++i]);
    else if (flag === "--grace-seconds") {
      const n = Number(args[++i]);
      if (!Number.isInteger(n) || n < 0) throw new Error(`--grace-seconds needs a whole number\n${USAGE}`);
      out.grace = n;
    } else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  if (!out.provider || !out.from || !out.to) throw new Error(USAGE);
  if (!(out.from < out.to)) throw new Error("--from must be before --to");
  return out as { provider: string; from: Date; to: Date; grace?: number };
}

runMain(async () => {
  const args = parseArgs(process.argv.slice(2));
  const config = loadConfig();
  const providers = reconcileProviders(config);
  if (providers.length === 0)
    throw new Error(`no provider is configured: set ${PROVIDERS_FILE_VARIABLE} to a providers file (docs/reconciliation.md)`);
  const provider = providers.find((p) => p.name === args.provider);
  if (!provider)
    throw new Error(
      `unknown provider ${JSON.stringify(args.provider)}: ${config.ONCEBOARD_PROVIDERS_FILE} names ${providers.map((p) => p.name).join(", ")}`,
    );
  if (!provider.configured) throw new Error(`${provider.label} cannot be read here: ${provider.notConfiguredReason}`);
  const adapter = adapterFor(provider, config);
  const db = await openDatabase();
  const pool = new pg.Pool(
    consolePoolConfig({
      connectionString: db.url,
      schema: config.ONCEBOARD_SCHEMA,
      statementTimeoutMs: null,
      max: 2,
      application_name: "onceboard-reconcile-cli",
    }),
  );
  const tty = process.stderr.isTTY;
  const spinner = ["|", "/", "-", "\\"];
  // Pages are staged in batches (of thousands of objects, or a second's worth): a line per batch
  // on a terminal, and one every 10 s into a log.
  let lastLine = 0;
  let progressLines = 0;
  try {
    const result = await reconcile({
      pool,
      adapter,
      provider,
      window: { from: args.from, to: args.to },
      graceSeconds: args.grace ?? config.RECONCILE_GRACE_SECONDS,
      trigger: "manual",
      requestedBy: `cli:${os.userInfo().username}`,
      onProgress: ({ pages, objects, resumed }) => {
        const line = `${spinner[progressLines++ % 4]} ${provider.label}: ${formatCountOf(pages, "page")}, ${formatCountOf(objects, "object")} staged${resumed ? " (resumed)" : ""}`;
        if (tty) process.stderr.write(`\r${line}`);
        else if (Date.now() - lastLine >= 10_000) {
          lastLine = Date.now();
          process.stderr.write(`${line}\n`);
        }
      },
    });
    if (tty) process.stderr.write("\n");
    if (result.status === "failed") throw new Error(`run ${result.runId} failed: ${result.error}`);
    log(
      `run ${result.runId}: ${formatCountOf(result.effectsSeen, "effect")}, ${formatCountOf(result.objectsSeen, provider.objectNoun)}`,
    );
    process.stdout.write(`${summaryLine(result)}\n`);
  } finally {
    await pool.end();
    await db.stop();
  }
});
