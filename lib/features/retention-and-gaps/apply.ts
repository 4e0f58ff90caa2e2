import type pg from "pg";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { defaultRegistry } from "../../idempotency";
import { maintain } from "../../idempotency/admin";
import type { ApplyResultView } from "./contract";
import { maintenancePool } from "./maintenance-pool";
import type { RetentionAudit } from "./settings";

interface ApplyDeps {
  pool?: pg.Pool;
  prisma?: PrismaClient;
  now?: Date;
  /** Who asked: recorded as the run's runner. */
  actor: string;
  trigger: "api" | "cli" | "schedule";
  audit?: RetentionAudit;
}

/** POST /api/v1/retention/apply and `npm run retention -- apply`: one maintenance run, now. */
export async function applyRetention(deps: ApplyDeps): Promise<ApplyResultView> {
  const run = await maintain(deps.pool ?? maintenancePool(), {
    now: deps.now,
    runner: deps.actor,
    trigger: deps.trigger,
    registry: defaultRegistry(),
  });
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
