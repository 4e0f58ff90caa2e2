import type { TextQueryable } from "./maintenance-settings";
import { COUNT_WORKER_RESTARTS } from "./maintenance-sql";
import { queryingIn, schemaNameOf } from "./schema";

/**
 * How many times the workers named `workerNames` (the worker_name of a worker's idem_worker_info)
 * restarted since `since`, from the starts the workers recorded themselves (worker_starts): every
 * process start after `since` but the first one on record. Counted where restarts happen, not by
 * whoever was watching: a worker killed eight times while no console page was open restarted eight
 * times. Several names (one process running several workers) count its processes once.
 */
export async function readWorkerRestarts(
  queryable: TextQueryable,
  workerNames: readonly string[],
  since: Date,
  schema?: string,
): Promise<number> {
  if (workerNames.length === 0) return 0;
  const db = queryingIn(queryable, schemaNameOf(schema));
  const { rows } = await db.query<{ restarts: number }>(COUNT_WORKER_RESTARTS, [workerNames, since]);
  return rows[0]?.restarts ?? 0;
}
