import os from "node:os";
import pg from "pg";
import { Scope } from "../lib/auth/scope";
import { effectsInConsoleDatabase, effectsStore, postgresEffectsStore } from "../lib/console/effects-store";
import { closeEffectsMysqlPools } from "../lib/db/effects-pool";
import { createPrismaClient } from "../lib/db/prisma";
import { openDatabase } from "../lib/db/provision";
import { runAdviseCommand } from "../lib/features/retention-and-gaps/advise-command";
import { applyRetention } from "../lib/features/retention-and-gaps/apply";
import type { PlanView } from "../lib/features/retention-and-gaps/contract";
import { type RetentionBlocker, RetentionError } from "../lib/features/retention-and-gaps/errors";
import { getRetentionPlan, getRetentionSettings } from "../lib/features/retention-and-gaps/get-retention";
import { PARTITION_INTERVALS, type PartitionIntervalName } from "../lib/features/retention-and-gaps/retention-types";
import {
  type RetentionAudit,
  type RetentionSettingsInput,
  updateRetentionSettings,
} from "../lib/features/retention-and-gaps/settings";
import { formatCountOf } from "../lib/format";
import { log, runMain } from "./cli";

/**
 * npm run retention -- plan | apply | settings [show] | settings set [--retention-days N]
 *   [--max-retry-window-days N] [--interval hour|day|week] [--premake N] [--force --reason "…"]
 *   | advise [--json …] (lib/features/retention-and-gaps/advise-command.ts)
 */
const USAGE =
  'usage: npm run retention -- plan | apply | advise [--json] | settings [show] | settings set [--retention-days N] [--max-retry-window-days N] [--interval hour|day|week] [--premake N] [--force --reason "…"]';

/** How the CLI names each setting a refusal can be blocked by. */
const CLI_SETTING: Record<RetentionBlocker["setting"], string> = {
  retentionDays: "--retention-days",
  maxRetryWindowDays: "--max-retry-window-days",
  workerMaxRetryWindow: "the worker's maxRetryWindow option",
};

const actor = `cli:${os.userInfo().username}`;

/** The CLI has no token: its audit rows name the OS user. */
const cliAudit: RetentionAudit = async (tx, entry) => {
  await tx.auditLog.create({
    data: { actor, action: entry.action, tenantId: null, target: entry.target, result: entry.result, detail: entry.detail },
  });
};

function printPlan(plan: PlanView): void {
  log(`now ${plan.now}; nothing ending after ${plan.dropBefore} is dropped; runway ${plan.runwayHours}h`);
  for (const c of plan.create) log(`create   ${c.name}  ${c.from} .. ${c.to}  (${c.reason})`);
  for (const p of plan.partitions) {
    const what = p.action === "keep" ? `keep     ${p.name}  [${p.guard}]` : `${p.action.padEnd(8)} ${p.name}`;
    log(`${what}  ${p.from ?? "?"} .. ${p.to ?? "?"}  ~${formatCountOf(Math.round(p.estimatedRows), "row")}  ${p.reason}`);
  }
  for (const o of plan.orphans) log(`drop     ${o}  (detached by an earlier run)`);
  for (const i of plan.index) log(`index    ${i.partition}  ${i.index}  ${i.reason}`);
}

function parseSet(args: string[]): RetentionSettingsInput {
  const input: RetentionSettingsInput = {};
  const int = (flag: string, value: string | undefined) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} needs a whole number, got ${value ?? "nothing"}`);
    return n;
  };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i];
    if (flag === "--retention-days") input.retentionDays = int(flag, args[++i]);
    else if (flag === "--max-retry-window-days") input.maxRetryWindowDays = int(flag, args[++i]);
    else if (flag === "--premake") input.premakeCount = int(flag, args[++i]);
    else if (flag === "--interval") {
      const value = args[++i] as PartitionIntervalName;
      if (!PARTITION_INTERVALS.includes(value)) throw new Error(`--interval must be one of ${PARTITION_INTERVALS.join(", ")}`);
      input.partitionInterval = value;
    } else if (flag === "--force") input.force = true;
    else if (flag === "--reason") input.reason = args[++i];
    else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  return input;
}

runMain(async () => {
  const [command, ...rest] = process.argv.slice(2);
  if (!command || !["plan", "apply", "advise", "settings"].includes(command)) throw new Error(USAGE);
  if (command === "advise") {
    process.exitCode = await runAdviseCommand(rest);
    return;
  }
  const db = await openDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 3, application_name: "onceboard-retention-cli" });
  const prisma = createPrismaClient(pool);
  // With EFFECTS_DATABASE_URL, the library's tables are on that MySQL server: plan, apply and the
  // settings shown and changed are its (a change audited as requested, then its outcome, as in the
  // console: lib/features/retention-and-gaps/settings.ts).
  const onMysql = !effectsInConsoleDatabase();
  const maintenance = onMysql ? {} : { pool };
  try {
    if (command === "plan") {
      printPlan(await getRetentionPlan(Scope.operator(), maintenance));
    } else if (command === "apply") {
      const run = await applyRetention({ ...maintenance, prisma, actor, trigger: "cli", audit: cliAudit });
      for (const op of run.operations) log(`${op.kind} ${op.partition}: ${op.result}${op.detail ? ` (${op.detail})` : ""}`);
      log(
        `run ${run.runId ?? "-"}: ${run.result}${run.error ? `: ${run.error}` : ""} (${formatCountOf(run.operations.length, "operation")})`,
      );
      if (run.result === "failed") process.exitCode = 1;
    } else if (rest[0] === "set") {
      try {
        const result = await updateRetentionSettings(parseSet(rest.slice(1)), { prisma, ...maintenance, actor, audit: cliAudit });
        for (const w of result.warnings) log(`warning: ${w}`);
        log(`settings: ${JSON.stringify(result.settings)}`);
      } catch (error) {
        if (!(error instanceof RetentionError)) throw error;
        // The refusal, then each setting in the way with the flag that changes it and the value it needs.
        process.stderr.write(`onceboard: ${error.code}: ${error.message}\n`);
        for (const b of error.blockers) process.stderr.write(`onceboard:   ${CLI_SETTING[b.setting]}: ${b.message}\n`);
        process.exitCode = 1;
      }
    } else if (rest.length === 0 || rest[0] === "show") {
      log(
        `settings: ${JSON.stringify(await getRetentionSettings(prisma, onMysql ? effectsStore() : postgresEffectsStore(pool)))}`,
      );
    } else {
      throw new Error(USAGE);
    }
  } finally {
    await prisma.$disconnect();
    await pool.end();
    await closeEffectsMysqlPools();
    await db.stop();
  }
});
