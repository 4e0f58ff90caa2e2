import pg from "pg";
import { type EffectsDb, isPgPool, type Sql, type Statement, sqlFor } from "./db";
import { CitusSetupError } from "./errors";
import { schemaNameOf } from "./schema";

/**
 * Citus (docs/scaling.md). When the effects table is distributed by tenant, every statement the
 * library sends on it must run on the worker holding the tenant's shard: a claim serialises
 * claimers on an advisory lock, and advisory locks are local to one node. onceboard_claim and the
 * one-tenant functions of migration 0018 are therefore distributed by their first argument
 * (p_tenant), co-located with effects and force-delegated (so a call inside a transaction block is
 * delegated too); the set-wise batch functions, which mix tenants, are never called on Citus.
 *
 * The library looks once, before its first claim: no citus extension, or effects not distributed,
 * is one server (or a coordinator keeping every row itself: one node, one lock table), and nothing
 * changes. Effects distributed but one of these functions not distributed as it must be is a
 * CitusSetupError on every claim, until `npm run db:migrate -- --citus` (distributeForCitus) fixes it.
 */

/** The functions Citus must delegate to the tenant's worker, by their argument types. */
export const CITUS_DELEGATED_FUNCTIONS = [
  "onceboard_claim(text,text,text,text,text,text,text,integer,integer,boolean,boolean,boolean)",
  "onceboard_claim_tenant(text,text[],text,text,text[],text[],text[],integer,integer,boolean[],boolean)",
  "onceboard_complete_tenant(text,text[],timestamptz[],text[],integer[],jsonb[],text[])",
  "onceboard_fail_tenant(text,text[],timestamptz[],text[],integer[],text[],text)",
  "onceboard_apply_tenant_duplicates(text,jsonb)",
  "onceboard_release_tenant(text,text,text,boolean)",
] as const;

/** The distribution column of effects: every claim names one tenant. */
const CITUS_DISTRIBUTION_COLUMN = "tenant_id";

/** What the library learned about its database before its first claim. */
export interface StoreMode {
  /** True when effects is a Citus distributed table: claims go through the one-tenant paths. */
  citus: boolean;
  /** The look in progress or done; null until the first claim, and again after a failed look. */
  checked: Promise<void> | null;
}

export function newStoreMode(): StoreMode {
  return { citus: false, checked: null };
}

const CITUS_EXTENSION: Statement = {
  name: "onceboard_citus_extension_v1",
  returns: "rows",
  text: "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'citus'",
};

// Read only when the extension exists: pg_dist_* are Citus's catalog tables.
const CITUS_LAYOUT: Statement = {
  name: "onceboard_citus_layout_v1",
  returns: "rows",
  text: `SELECT (SELECT pg_catalog.column_to_column_name(p.logicalrelid, p.partkey)
          FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid = to_regclass($1::text)) AS effects_column,
       (SELECT p.colocationid FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid = to_regclass($1::text)) AS effects_colocation,
       f.fn, to_regprocedure(f.fn) IS NOT NULL AS fn_exists, o.distribution_argument_index, o.colocationid, o.force_delegation
  FROM unnest($2::text[]) WITH ORDINALITY AS f(fn, ord)
  LEFT JOIN pg_catalog.pg_dist_object o
    ON o.classid = 'pg_catalog.pg_proc'::regclass AND o.objid = to_regprocedure(f.fn)::oid AND o.objsubid = 0
 ORDER BY f.ord`,
};

interface LayoutRow {
  effects_column: string | null;
  effects_colocation: number | null;
  fn: string;
  fn_exists: boolean;
  distribution_argument_index: number | null;
  colocationid: number | null;
  force_delegation: boolean | null;
}

/** Why each delegated function is not as it must be (empty: all are). */
function whatIsWrong(rows: readonly LayoutRow[]): string[] {
  const wrong: string[] = [];
  for (const r of rows) {
    if (!r.fn_exists) wrong.push(`${r.fn} does not exist (migrations not applied)`);
    else if (r.distribution_argument_index === null) wrong.push(`${r.fn} is not a distributed function`);
    else if (Number(r.distribution_argument_index) !== 0) wrong.push(`${r.fn} is not distributed by p_tenant`);
    else if (Number(r.colocationid) !== Number(r.effects_colocation)) wrong.push(`${r.fn} is not co-located with effects`);
    else if (r.force_delegation !== true) wrong.push(`${r.fn} is not force-delegated`);
  }
  return wrong;
}

function layoutParams(schema: string): unknown[] {
  return [`${schema}.effects`, CITUS_DELEGATED_FUNCTIONS.map((fn) => `${schema}.${fn}`)];
}

/**
 * Whether `db` is a Citus cluster with effects distributed, checking that every delegated function
 * is distributed as it must be (CitusSetupError naming what is not).
 */
export async function detectCitus(sql: Sql, schema: string): Promise<boolean> {
  const extension = await sql.run(CITUS_EXTENSION, []);
  if (extension.rows.length === 0) return false;
  const { rows } = await sql.run<LayoutRow>(CITUS_LAYOUT, layoutParams(schema));
  const column = rows[0]?.effects_column ?? null;
  if (column === null) return false;
  if (column !== CITUS_DISTRIBUTION_COLUMN) {
    throw new CitusSetupError(
      `${schema}.effects is distributed by ${column}, not ${CITUS_DISTRIBUTION_COLUMN}: no claim is made`,
    );
  }
  const wrong = whatIsWrong(rows);
  if (wrong.length > 0) {
    throw new CitusSetupError(
      `${schema}.effects is distributed by Citus but ${wrong.join("; ")}: a claim would lock on the wrong node, so none is made. Run npm run db:migrate -- --citus`,
    );
  }
  return true;
}

/** Looks once (again after a failure) before claims: see StoreMode. */
export function ensureStoreMode(store: StoreMode, db: EffectsDb, schema: string): Promise<void> {
  store.checked ??= detectCitus(sqlFor(db, false, schema), schema).then(
    (citus) => {
      store.citus = citus;
    },
    (error: unknown) => {
      store.checked = null;
      throw error;
    },
  );
  return store.checked;
}

/**
 * Whether `schema`.effects is a Citus distributed table (false without the citus extension): for
 * the few statements that must be written another way on Citus (retention, the console's reads).
 */
export async function isEffectsDistributed(
  client: { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> },
  schema: string,
): Promise<boolean> {
  const ext = await client.query("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus'");
  if (ext.rows.length === 0) return false;
  const { rows } = await client.query("SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = to_regclass($1::text)", [
    `${schema}.effects`,
  ]);
  return rows.length > 0;
}

/** Groups items by tenant, keeping each item's index in the input. */
export function byTenant<T>(items: readonly T[], tenantOf: (item: T) => string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  for (const [index, item] of items.entries()) {
    const tenant = tenantOf(item);
    const list = groups.get(tenant);
    if (list) list.push(index);
    else groups.set(tenant, [index]);
  }
  return groups;
}

export interface DistributeResult {
  schema: string;
  /** Statements that changed the cluster (empty on a cluster already set up). */
  changed: string[];
}

/**
 * Distributes the library's schema on a Citus coordinator whose workers are registered: effects by
 * tenant_id (its daily partitions follow), the delegated functions by p_tenant beside it, and a
 * replica identity on every partition so that a shard move can run online (logical replication).
 * Idempotent: what is already as it must be is left alone. Rollups, the delivery timeline, the
 * worker registry and the console's tables stay plain tables on the coordinator.
 */
export async function distributeForCitus(
  db: string | pg.Pool | pg.Client,
  options: { schema?: string } = {},
): Promise<DistributeResult> {
  const schema = schemaNameOf(options.schema);
  const own = typeof db === "string" ? new pg.Client({ connectionString: db, application_name: "onceboard-citus" }) : null;
  if (own) await own.connect();
  const client: pg.Client | pg.PoolClient = own ?? (isPgPool(db) ? await db.connect() : (db as pg.Client));
  const changed: string[] = [];
  const run = async (text: string) => {
    await client.query(text);
    changed.push(text);
  };
  try {
    const ext = await client.query("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus'");
    if (ext.rowCount === 0) throw new CitusSetupError("the citus extension is not installed in this database");
    const workers = await client.query(
      "SELECT count(*)::int AS n FROM pg_catalog.pg_dist_node WHERE noderole = 'primary' AND isactive AND shouldhaveshards AND groupid <> 0",
    );
    if ((workers.rows[0] as { n: number }).n === 0) {
      throw new CitusSetupError("no Citus worker is registered (citus_add_node): effects would have nowhere to go");
    }
    const effects = `${schema}.effects`;
    const sql = sqlFor(client, false, schema);
    let { rows } = await sql.run<LayoutRow>(CITUS_LAYOUT, layoutParams(schema));
    const distributing = rows[0]?.effects_column == null;
    if (distributing) {
      await run(`SELECT create_distributed_table('${effects}', '${CITUS_DISTRIBUTION_COLUMN}')`);
      ({ rows } = await sql.run<LayoutRow>(CITUS_LAYOUT, layoutParams(schema)));
    }
    for (const row of rows) {
      if (whatIsWrong([row]).length === 0) continue;
      if (!row.fn_exists) throw new CitusSetupError(`${row.fn} does not exist: run the migrations first`);
      await run(
        `SELECT create_distributed_function('${row.fn}', 'p_tenant', colocate_with := '${effects}', force_delegation := true)`,
      );
    }
    const partitions = await client.query<{ partition: string; index: string }>(
      `SELECT c.oid::regclass::text AS partition, i.indexrelid::regclass::text AS index
         FROM pg_catalog.pg_inherits h
         JOIN pg_catalog.pg_class c ON c.oid = h.inhrelid
         JOIN pg_catalog.pg_index i ON i.indrelid = c.oid AND i.indisunique
         JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid AND ic.relname LIKE '%_tenant_key_uq'
        WHERE h.inhparent = $1::regclass AND ($2::boolean OR c.relreplident <> 'i')
        ORDER BY 1`,
      // Just distributed: every partition again, as create_distributed_table made the shards
      // without the replica identity their partition already had (measured on Citus 13.0.5).
      [effects, distributing],
    );
    for (const p of partitions.rows)
      await run(`ALTER TABLE ${p.partition} REPLICA IDENTITY USING INDEX ${p.index.replace(/^.*\./, "")}`);
    return { schema, changed };
  } finally {
    if (own) await own.end();
    else if (isPgPool(db)) (client as pg.PoolClient).release();
  }
}
