import pg from "pg";
import { ApiError } from "../../api/errors";
import { audit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import { type Config, loadConfig } from "../../config";
import { NotOnThisEffectsStoreError } from "../../console/errors";
import { consolePoolConfig } from "../../db/pool";
import type { PrismaClient } from "../../db/prisma";
import { getPrisma } from "../../db/prisma";
import type { ProviderAdapter } from "../../reconciliation/adapter";
import { adapterFor } from "../../reconciliation/adapters";
import { PROVIDERS_FILE_VARIABLE, type ReconcileProvider, reconcileProviders } from "../../reconciliation/providers";
import { ReconcileBusyError, reconcile } from "../../reconciliation/reconcile";
import type { ReconciliationRun } from "./contract";
import { type RunRow, toReconciliationRun } from "./list-reconciliation-runs";

/** How long the request waits for the run to start (or be refused) before answering. */
const START_WAIT_MS = 10_000;

interface StartDeps {
  config?: Config;
  prisma?: PrismaClient;
  adapter?: (provider: ReconcileProvider, config: Config) => ProviderAdapter;
}

const RUN_COLUMNS = `id::text AS id, provider, window_from, window_to, grace_seconds, status, trigger, requested_by,
       started_at, finished_at, heartbeat_at, objects_seen::float8 AS objects_seen, effects_seen::float8 AS effects_seen,
       matched::float8 AS matched, counts, error`;

const RUN_BY_ID = `SELECT ${RUN_COLUMNS} FROM reconciliation_runs WHERE id = $1::bigint`;

/** Why reconciliation does not run against a MySQL effects store (the API's 501, the schedule's log line). */
export function reconciliationNotOnMysql(): NotOnThisEffectsStoreError {
  return new NotOnThisEffectsStoreError(
    "Reconciliation",
    "the reconciler joins the provider's objects with the effects in one PostgreSQL statement, beside its findings and coverage in the console's PostgreSQL, and here the effects are on the MySQL server (EFFECTS_DATABASE_URL), which that statement cannot reach. To reconcile, run a console whose effects store is PostgreSQL (EFFECTS_DATABASE_URL unset), or compare your provider's export with the effects table on MySQL yourself; releases, bulk releases and retention changes do work on this store",
  );
}

/**
 * POST /api/v1/reconciliation/runs: one reconciliation of a provider's window, started now in this
 * process (its own connections, without the console's statement timeout: a day of objects is one
 * long comparison). The request waits until the run's row exists and answers with it; the run goes
 * on after the answer, and the Runs table shows its progress. Another run of the same window holds
 * its lock: 409, nothing written. Started and refused attempts are audited.
 */
export async function startReconciliation(
  input: { principal: Principal; provider: string; from: Date; to: Date; ip: string | null },
  deps: StartDeps = {},
): Promise<ReconciliationRun> {
  const config = deps.config ?? loadConfig();
  if (config.EFFECTS_DATABASE_URL) throw reconciliationNotOnMysql();
  const prisma = deps.prisma ?? getPrisma();
  const target = `${input.provider} ${input.from.toISOString()}..${input.to.toISOString()}`;
  const refuse = async (code: "NOT_FOUND" | "CONFLICT", message: string, result: string): Promise<never> => {
    await audit(
      {
        principal: input.principal,
        action: "reconciliation.run",
        tenantId: null,
        target,
        result,
        detail: { message },
        ip: input.ip,
      },
      prisma,
    );
    throw new ApiError(code, message);
  };
  const providers = reconcileProviders(config);
  const provider = providers.find((p) => p.name === input.provider);
  if (!provider) {
    const named =
      providers.length === 0 ? `none is configured (set ${PROVIDERS_FILE_VARIABLE})` : providers.map((p) => p.name).join(", ");
    return refuse("NOT_FOUND", `no provider named ${JSON.stringify(input.provider)}: ${named}`, "not_found");
  }
  if (!provider.configured)
    return refuse("CONFLICT", `${provider.label} is not configured here: ${provider.notConfiguredReason}`, "not_configured");
  if (!config.DATABASE_URL) throw new ApiError("DATABASE_NOT_CONFIGURED", "DATABASE_URL is not set");
  const adapter = (deps.adapter ?? adapterFor)(provider, config);
  const pool = new pg.Pool(
    consolePoolConfig({
      connectionString: config.DATABASE_URL,
      schema: config.ONCEBOARD_SCHEMA,
      statementTimeoutMs: null,
      max: 2,
      application_name: "onceboard-reconcile-api",
    }),
  );
  pool.on("error", () => {});
  // The run tells its own id the moment its row exists (or that it could not start): no reading the
  // catalog for which running run is this request's.
  let resolveStarted: (runId: number) => void = () => {};
  let rejectStarted: (error: unknown) => void = () => {};
  const started = new Promise<number>((resolve, reject) => {
    resolveStarted = resolve;
    rejectStarted = reject;
  });
  void reconcile({
    pool,
    adapter,
    provider,
    window: { from: input.from, to: input.to },
    graceSeconds: config.RECONCILE_GRACE_SECONDS,
    trigger: "api",
    requestedBy: input.principal.actor,
    onStarted: ({ runId }) => resolveStarted(runId),
  })
    // A run that ends before anyone asked is still started (its id is the same); a refusal is the answer.
    .then(({ runId }) => resolveStarted(runId), rejectStarted)
    .finally(() => pool.end().catch(() => {}));
  let timer: NodeJS.Timeout | undefined;
  const tooLate = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ApiError("QUERY_TIMEOUT", "the run did not start within 10 s; see the Runs table")),
      START_WAIT_MS,
    );
  });
  const runId = await Promise.race([started, tooLate])
    .catch((error: unknown) => {
      if (error instanceof ReconcileBusyError) return refuse("CONFLICT", error.message, "busy");
      throw error;
    })
    .finally(() => clearTimeout(timer));
  const [row] = await prisma.$queryRawUnsafe<RunRow[]>(RUN_BY_ID, String(runId));
  if (!row) throw new Error(`run ${runId} started but its row was not found`);
  await audit(
    {
      principal: input.principal,
      action: "reconciliation.run",
      tenantId: null,
      target,
      result: "ok",
      detail: { runId: row.id },
      ip: input.ip,
    },
    prisma,
  );
  return toReconciliationRun(row, true, new Date());
}
