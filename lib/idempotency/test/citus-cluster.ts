import pg from "pg";
import { distributeForCitus } from "../citus";
import { migrate } from "../migrate";

/**
 * The Citus tier's cluster: CITUS_URL, a coordinator whose workers are registered (a local one:
 * scripts/citus-cluster.sh start). Without CITUS_URL the tier skips with a loud notice, also under
 * CI=true: CI machines have no Citus. CITUS_URL set but not answering, or not a Citus coordinator
 * with workers, is an error: the run asked for the tier.
 */
export async function findTestCitus(): Promise<string | null> {
  const url = process.env.CITUS_URL;
  if (!url) {
    console.warn(
      `\n${"!".repeat(78)}\n!! Citus tier SKIPPED: CITUS_URL is not set.\n!! Start a local cluster (scripts/citus-cluster.sh start) and set the CITUS_URL it prints.\n${"!".repeat(78)}\n`,
    );
    return null;
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ workers: number }>(
      "SELECT count(*)::int AS workers FROM pg_dist_node WHERE noderole = 'primary' AND groupid <> 0 AND isactive",
    );
    if ((rows[0]?.workers ?? 0) < 2) throw new Error(`CITUS_URL ${url}: the tier needs two registered workers`);
  } finally {
    await client.end();
  }
  return url;
}

/** Installs the library in `schema` on the coordinator and distributes it, as `db:migrate -- --citus` does. */
export async function installOnCitus(url: string, schema: string): Promise<void> {
  await migrate(url, { schema });
  await distributeForCitus(url, { schema });
}

/** The worker port holding each tenant's shard of `schema.effects`. */
export async function workerPortOf(pool: pg.Pool, schema: string, tenants: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ tenant: string; port: number }>(
    `SELECT t.tenant, s.nodeport AS port
       FROM unnest($2::text[]) AS t(tenant)
       JOIN citus_shards s ON s.shardid = get_shard_id_for_distribution_column($1::regclass, t.tenant)`,
    [`${schema}.effects`, tenants],
  );
  return new Map(rows.map((r) => [r.tenant, Number(r.port)]));
}
