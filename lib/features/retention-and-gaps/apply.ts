import type pg from "pg";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { defaultRegistry } from "../../idempotency";
import { maintain } from "../../idempotency/admin";
import type { ApplyResultView } from "./contract";
import { type MaintenanceTarget, maintenanceTarget } from "./maintenance-pool";
import type { RetentionAudit } from "./settings";

interface ApplyDeps {
  /** The PostgreSQL maintenance pool (tests); unset: the configured effects store's (maintenanceTarget). */
  pool?: pg.Pool;
  target?: MaintenanceTarget;
  prisma?: PrismaClient;
  now?: Date;
  /** Who asked: recorded as the run's runner. */
  actor: string;
  trigger: "api" | "cli" | "schedule";
  audit?: RetentionAudit;
}

/** POST /api/v1/retention/apply and `npm run retention -- apply`: one maintenance run, now. */
export async function applyRetention(deps: ApplyDeps): Promise<ApplyResultView> {
  const target: MaintenanceTarget = deps.target ?? (deps.pool ? { engine: "postgres", pool: deps.pool } : maintenanceTarget());
  const options = { now: deps.now, runner: deps.actor, trigger: deps.trigger, registry: defaultRegistry() };
  // The library's run on the store's own engine: on MySQL, the timeline's day partitions and the
  // expired effects' paced deletes, recorded in that store's maintenance_runs.
  const run =
    target.engine === "mysql"
      ? await maintain(target.pool, { ...options, schema: target.database })
      : await maintain(target.pool, options);
  const view: ApplyResultView = {
    result: run.result,
    runId: run.runId,
    operations: run.operations,
    ...(run.error ? { error: run.error } : {}),
  };
  if (deps.audit) {
    const audit = deps.audit;
    // DDL cannot share a transaction with the audit row; the run row (maintenance_runs) is the
    // record of what happened, the audit row of who asked.
    await (deps.prisma ?? getPrisma()).$transaction((tx) =>
      audit(tx, {
        action: "retention.apply",
        target: run.runId ? `maintenance_run:${run.runId}` : "maintenance",
        result: run.result,
        detail: { operations: run.operations.length, error: run.error ?? null },
      }),
    );
  }
  return view;
}
