import type { Registry } from "prom-client";
import type { Logger } from "./logger";
import type { Operation } from "./maintenance-operation";
import type { MaintenancePlan } from "./maintenance-ranges";

/** What one maintenance run takes and answers, on either engine (maintenance.ts, maintenance-mysql.ts). */

export interface MaintenanceRunResult {
  /** skipped: another runner held the lock. */
  result: "success" | "failed" | "skipped";
  runId: string | null;
  operations: Operation[];
  plan: MaintenancePlan | null;
  error?: string;
}

export interface MaintainOptions {
  /** The manager's clock. Default: the real time. */
  now?: Date;
  /** Names the runner in maintenance_runs. Default host:pid. */
  runner?: string;
  /** What started this run: schedule, cli, api, test… */
  trigger?: string;
  logger?: Logger;
  /** Registry for the idem_partition_* / idem_maintenance_* metrics; none: not counted. */
  registry?: Registry;
  /** lock_timeout for each DETACH / ATTACH attempt. Default 2000 ms. */
  lockTimeoutMs?: number;
  /**
   * lock_timeout for each CREATE / DROP INDEX CONCURRENTLY attempt on a closed partition. Default
   * 60000 ms. Longer than a DETACH's because its waits (its lock on that one partition, then for
   * older transactions to end) never hold up a claim, only this run; and its last wait comes after
   * the whole build, so a short timeout behind one long transaction would build and throw away the
   * index on every attempt.
   */
  indexLockTimeoutMs?: number;
  /** Attempts per DETACH or index build before giving up for this run (the next run finishes it). Default 5. */
  attempts?: number;
  /** Test hook: runs while the maintenance lock is held, before anything else. */
  afterLock?: () => Promise<void>;
  /** The library's schema (schema.ts). Default onceboard. */
  schema?: string;
}
