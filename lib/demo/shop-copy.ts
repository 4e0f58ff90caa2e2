import pg from "pg";
import type { Queryable } from "./db-types";
import { mariadbOnly, type Shop } from "./shop";

/**
 * Where the demo's verdict (verify.ts, lib/soak/verify.ts) reads the shop's rows. Its SQL joins
 * them with the demo provider's storage, which is in the demo's PostgreSQL; a MariaDB shop's rows
 * are on another server, so they are copied into temporary tables of the verifying session first,
 * and the one verdict's SQL reads those. Nothing is computed twice: the copy is the rows as they
 * are, the verdict stays one query.
 */
export interface ShopTables {
  orders: string;
  entries: string;
  /** The effects' rows; on MariaDB, the copy holds the receipts' rows (tenant, key, status): all the verdict reads of them. */
  effects: string;
}

/** The shop's own tables, on PostgreSQL (the demo's search_path finds them). */
const POSTGRES_SHOP_TABLES: ShopTables = {
  orders: "demo_orders",
  entries: "demo_accounting_entries",
  effects: "effects",
};

const COPIED: ShopTables = {
  orders: "pg_temp.shop_orders",
  entries: "pg_temp.shop_accounting_entries",
  effects: "pg_temp.shop_effects",
};

/** Rows per page read from MariaDB and written to PostgreSQL. */
const PAGE = 10_000;

/** Copies one table's rows, page by page in key order (keyset: the last page's key, never an OFFSET). */
async function copyPages<R extends Record<string, unknown>>(
  shop: Shop,
  session: Queryable,
  read: { first: string; next: string; key: (row: R) => unknown[] },
  write: { sql: string; columns: (rows: R[]) => unknown[][] },
): Promise<number> {
  let rows = await shop.rows<R>(mariadbOnly(read.first));
  let copied = 0;
  while (rows.length > 0) {
    await session.query(write.sql, write.columns(rows));
    copied += rows.length;
    if (rows.length < PAGE) break;
    rows = await shop.rows<R>(mariadbOnly(read.next), read.key(rows.at(-1)!));
  }
  return copied;
}

const col = <R, K extends keyof R>(rows: R[], k: K) => rows.map((r) => r[k]);

interface OrderRow extends Record<string, unknown> {
  tenant_id: string;
  order_id: string;
  amount_cents: number;
  status: string;
  charge_id: string | null;
  paid_at: Date | null;
  created_at: Date;
}
interface EntryRow extends Record<string, unknown> {
  id: number;
  tenant_id: string;
  order_id: string;
  kind: string;
}
interface EffectRow extends Record<string, unknown> {
  tenant_id: string;
  key: string;
  status: string;
}

async function copyShop(shop: Shop, session: Queryable): Promise<void> {
  await session.query(`DROP TABLE IF EXISTS ${COPIED.orders}, ${COPIED.entries}, ${COPIED.effects}`);
  await session.query(
    `CREATE TEMPORARY TABLE shop_orders (tenant_id text NOT NULL, order_id text NOT NULL, amount_cents integer NOT NULL,
       status text NOT NULL, charge_id text, paid_at timestamptz, created_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, order_id))`,
  );
  await session.query(
    "CREATE TEMPORARY TABLE shop_accounting_entries (tenant_id text NOT NULL, order_id text NOT NULL, kind text NOT NULL)",
  );
  await session.query(
    "CREATE TEMPORARY TABLE shop_effects (tenant_id text NOT NULL, key text NOT NULL, status text NOT NULL, PRIMARY KEY (tenant_id, key))",
  );
  const orders = "SELECT tenant_id, order_id, amount_cents, status, charge_id, paid_at, created_at FROM demo_orders";
  await copyPages<OrderRow>(
    shop,
    session,
    {
      first: `${orders} ORDER BY tenant_id, order_id LIMIT ${PAGE}`,
      next: `${orders} WHERE (tenant_id, order_id) > ($1, $2) ORDER BY tenant_id, order_id LIMIT ${PAGE}`,
      key: (r) => [r.tenant_id, r.order_id],
    },
    {
      sql: `INSERT INTO ${COPIED.orders}
            SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[])`,
      columns: (rows) => [
        col(rows, "tenant_id"),
        col(rows, "order_id"),
        col(rows, "amount_cents"),
        col(rows, "status"),
        col(rows, "charge_id"),
        col(rows, "paid_at"),
        col(rows, "created_at"),
      ],
    },
  );
  const entries = "SELECT id, tenant_id, order_id, kind FROM demo_accounting_entries";
  await copyPages<EntryRow>(
    shop,
    session,
    {
      first: `${entries} ORDER BY id LIMIT ${PAGE}`,
      next: `${entries} WHERE id > $1 ORDER BY id LIMIT ${PAGE}`,
      key: (r) => [r.id],
    },
    {
      sql: `INSERT INTO ${COPIED.entries} SELECT * FROM unnest($1::text[], $2::text[], $3::text[])`,
      columns: (rows) => [col(rows, "tenant_id"), col(rows, "order_id"), col(rows, "kind")],
    },
  );
  const receipts = "SELECT tenant_id, `key`, status FROM effects WHERE `key` LIKE 'receipt:%'";
  await copyPages<EffectRow>(
    shop,
    session,
    {
      first: `${receipts} ORDER BY tenant_id, \`key\` LIMIT ${PAGE}`,
      next: `${receipts} AND (tenant_id, \`key\`) > ($1, $2) ORDER BY tenant_id, \`key\` LIMIT ${PAGE}`,
      key: (r) => [r.tenant_id, r.key],
    },
    {
      sql: `INSERT INTO ${COPIED.effects} SELECT * FROM unnest($1::text[], $2::text[], $3::text[])`,
      columns: (rows) => [col(rows, "tenant_id"), col(rows, "key"), col(rows, "status")],
    },
  );
  await session.query(`ANALYZE ${COPIED.orders}`);
}

/**
 * Runs `read` with a PostgreSQL session and the shop's tables as it can read them: on a PostgreSQL
 * shop (or none) `db` itself and the shop's own tables; on a MariaDB shop one connection of `db`
 * holding fresh copies of the shop's rows (dropped afterwards).
 */
export async function withShopTables<T>(
  db: Queryable | pg.Pool,
  shop: Shop | undefined,
  read: (session: Queryable, tables: ShopTables) => Promise<T>,
): Promise<T> {
  if (!shop || shop.store === "postgres") return read(db, POSTGRES_SHOP_TABLES);
  const client = db instanceof pg.Pool ? await db.connect() : undefined;
  const session: Queryable = client ?? db;
  try {
    await copyShop(shop, session);
    return await read(session, COPIED);
  } finally {
    await session.query(`DROP TABLE IF EXISTS ${COPIED.orders}, ${COPIED.entries}, ${COPIED.effects}`).catch(() => {});
    client?.release();
  }
}
