import { randomBytes } from "node:crypto";
import pg from "pg";
import { createToken } from "../lib/auth/tokens";
import { migrateConsole } from "../lib/db/migrate";
import { ensureEffectPartitions } from "../lib/db/partitions";
import { createScratchDatabase, dropDatabase, withDatabase } from "../lib/db/scratch";
import { seedKeys } from "../lib/features/keys-and-effects/testing/seed-keys";
import { seedOverview } from "../lib/features/overview/testing/seed-overview";
import { seedReconciliation } from "../lib/features/reconciliation/testing/seed-reconciliation";
import { GAPS_SEED_DAYS_BACK, seedGaps } from "../lib/features/retention-and-gaps/testing/seed-gaps";
import { distributeForCitus } from "../lib/idempotency/citus";
import { endConsoleHandles } from "./database";

/** A whole Onceboard database (the console's tables and the library's) on a Citus cluster. */
export interface CitusConsoleDatabase {
  /** The coordinator's URL for it, as a user gives DATABASE_URL. */
  url: string;
  name: string;
  /** Each worker's port, by the tenants' shards: see tenantsByWorker. */
  workerPorts: number[];
  drop(): Promise<void>;
}

interface Node {
  host: string;
  port: number;
}

async function onNode<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

function nodeUrl(base: string, node: Node, database: string): string {
  const url = new URL(withDatabase(base, database));
  url.hostname = node.host;
  url.port = String(node.port);
  return url.toString();
}

/**
 * A scratch database on the Citus cluster whose coordinator `coordinatorUrl` names, set up as a
 * user sets one up: the database and the citus extension on every node (Citus does not propagate
 * CREATE DATABASE by default), the workers registered in it from the coordinator, then
 * `npm run db:migrate -- --citus`'s two steps (every migration, then distributeForCitus) and
 * partitions from `back` days back to a week ahead (as the tests' template has). drop() removes it from every node.
 */
export async function createCitusConsoleDatabase(
  coordinatorUrl: string,
  { back = 2 }: { back?: number } = {},
): Promise<CitusConsoleDatabase> {
  const coordinator = new URL(coordinatorUrl);
  const self: Node = { host: coordinator.hostname, port: Number(coordinator.port || 5432) };
  const workers = await onNode(coordinatorUrl, async (c) => {
    const { rows } = await c.query<Node>(
      "SELECT nodename AS host, nodeport AS port FROM pg_catalog.pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeport",
    );
    return rows;
  });
  const name = `onceboard_citus_${randomBytes(4).toString("hex")}`;
  const nodes = [self, ...workers];
  const drop = async () => {
    for (const node of nodes) await dropDatabase(nodeUrl(coordinatorUrl, node, "postgres"), name).catch(() => {});
  };
  try {
    for (const node of nodes) {
      await createScratchDatabase(nodeUrl(coordinatorUrl, node, "postgres"), { name });
      await onNode(nodeUrl(coordinatorUrl, node, name), (c) => c.query("CREATE EXTENSION citus"));
    }
    const url = nodeUrl(coordinatorUrl, self, name);
    await onNode(url, async (c) => {
      await c.query("SELECT citus_set_coordinator_host($1, $2)", [self.host, self.port]);
      for (const w of workers) await c.query("SELECT citus_add_node($1, $2)", [w.host, w.port]);
    });
    await migrateConsole(url);
    await distributeForCitus(url);
    await onNode(url, (c) => ensureEffectPartitions(c, { back, ahead: 7 }));
    return { url, name, workerPorts: workers.map((w) => w.port), drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

/** The worker port holding each tenant's shard of onceboard.effects. */
export async function tenantsByWorker(pool: pg.Pool, tenants: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ tenant: string; port: number }>(
    `SELECT t.tenant, s.nodeport AS port
       FROM unnest($1::text[]) AS t(tenant)
       JOIN citus_shards s ON s.shardid = get_shard_id_for_distribution_column('onceboard.effects'::regclass, t.tenant)`,
    [tenants],
  );
  return new Map(rows.map((r) => [r.tenant, Number(r.port)]));
}

/**
 * Points the console in this process at `url`: its pools, its Prisma client and what holds them (the
 * rate limits, the audit chain's walk) are process-wide, made again on first use after this. For a
 * test or benchmark comparing one server with a Citus cluster in one process.
 */
export async function pointConsoleAt(url: string): Promise<void> {
  await endConsoleHandles();
  process.env.DATABASE_URL = url;
}

/** Far enough back for every seed of seedConsoleWorkload (the gaps seed is the oldest). */
export const PARTITIONS_BACK = GAPS_SEED_DAYS_BACK + 1;

/**
 * The console's test workload as of `now` (the Keys, gaps, Overview and reconciliation seeds:
 * tenants acme, globex and initech), made through the console's pool on `pool`'s database, and a
 * platform admin's and acme's admin's API tokens (createToken: the console's pool, DATABASE_URL).
 */
export async function seedConsoleWorkload(pool: pg.Pool, now: Date): Promise<{ platform: string; acme: string }> {
  await ensureEffectPartitions(pool, { back: PARTITIONS_BACK, ahead: 1 });
  await seedKeys(pool, now);
  await seedGaps(pool, now);
  await seedOverview(pool, now);
  await seedReconciliation(pool, now);
  return {
    platform: (await createToken({ name: "citus-platform", tenantId: null, role: "admin" })).secret,
    acme: (await createToken({ name: "citus-acme", tenantId: "acme", role: "admin" })).secret,
  };
}
