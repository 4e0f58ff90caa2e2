import { randomBytes } from "node:crypto";
import type pg from "pg";

/**
 * The demo provider's storage (schema onceboard_demo_provider): its tables, the statements every
 * create and retrieve runs, object ids, the Stripe shape of a stored row, and the bulk loader that
 * tests and the benchmark seed it with. The HTTP server in front of it is stripe-server.ts.
 */
export const PROVIDER_SCHEMA = "onceboard_demo_provider";

const SCHEMA_SQL = `
CREATE SCHEMA IF NOT EXISTS ${PROVIDER_SCHEMA};
CREATE TABLE IF NOT EXISTS ${PROVIDER_SCHEMA}.objects (
  id          text        NOT NULL,
  kind        text        NOT NULL CHECK (kind IN ('payment_intent', 'refund')),
  amount      bigint      NOT NULL,
  currency    text        NOT NULL,
  status      text        NOT NULL,
  metadata    jsonb       NOT NULL DEFAULT '{}'::jsonb,
  payment_intent text,
  created     bigint      NOT NULL,
  CONSTRAINT objects_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS objects_list_idx ON ${PROVIDER_SCHEMA}.objects (kind, created DESC, id DESC);
CREATE TABLE IF NOT EXISTS ${PROVIDER_SCHEMA}.idempotency_keys (
  api_key     text        NOT NULL,
  key         text        NOT NULL,
  path        text        NOT NULL,
  status      integer     NOT NULL,
  response    jsonb       NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (api_key, key)
);
CREATE TABLE IF NOT EXISTS ${PROVIDER_SCHEMA}.injections (
  id          bigserial   NOT NULL,
  disagreement text       NOT NULL,
  object_id   text,
  onceboard_key text,
  onceboard_tenant text,
  injected_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT injections_pkey PRIMARY KEY (id)
);
-- One disagreement per Onceboard key, whatever number of requests carry it: a retry that drew a
-- second one could undo the first (a lost object made again by a pruned key's retry), leaving two
-- planted findings for a key the provider in fact agrees on.
CREATE TABLE IF NOT EXISTS ${PROVIDER_SCHEMA}.planted_keys (
  onceboard_tenant text NOT NULL,
  onceboard_key    text NOT NULL,
  CONSTRAINT planted_keys_pkey PRIMARY KEY (onceboard_tenant, onceboard_key)
);`;

// The statements of every create and retrieve, prepared (named): PostgreSQL parses and plans each
// once per connection instead of at every request (the soak makes a PaymentIntent per order).
export const CREATE_SQL = {
  pruneKey: {
    name: "provider_prune_key_v1",
    text: `DELETE FROM ${PROVIDER_SCHEMA}.idempotency_keys
            WHERE api_key = $1 AND key = $2 AND (created_at < now() - make_interval(secs => $3) OR $4)`,
  },
  takeKey: {
    name: "provider_take_key_v1",
    text: `INSERT INTO ${PROVIDER_SCHEMA}.idempotency_keys (api_key, key, path, status, response) VALUES ($1, $2, $3, 0, '{}')
           ON CONFLICT DO NOTHING`,
  },
  replay: {
    name: "provider_replay_v1",
    text: `SELECT status, response, path FROM ${PROVIDER_SCHEMA}.idempotency_keys WHERE api_key = $1 AND key = $2`,
  },
  insertObject: {
    name: "provider_insert_object_v1",
    text: `INSERT INTO ${PROVIDER_SCHEMA}.objects (id, kind, amount, currency, status, metadata, payment_intent, created)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  },
  storeResponse: {
    name: "provider_store_response_v1",
    text: `UPDATE ${PROVIDER_SCHEMA}.idempotency_keys SET status = 200, response = $3 WHERE api_key = $1 AND key = $2`,
  },
} as const;
export const RETRIEVE_SQL = {
  name: "provider_retrieve_v1",
  text: `SELECT * FROM ${PROVIDER_SCHEMA}.objects WHERE id = $1 AND kind = $2`,
} as const;

export async function installProviderSchema(db: pg.Pool | pg.Client): Promise<void> {
  await db.query(SCHEMA_SQL);
}

// Ids are cut from a pool of random bytes refilled 4 KiB at a time: randomBytes(12) per id was a
// synchronous call into the CSPRNG twice per request (the object and the request-id header),
// 2% of a soak worker's CPU.
const ID_BYTES = 12;
let idPool = Buffer.alloc(0);
let idPoolAt = 0;
export const objectId = (prefix: string) => {
  if (idPoolAt + ID_BYTES > idPool.length) {
    idPool = randomBytes(4096);
    idPoolAt = 0;
  }
  const hex = idPool.toString("hex", idPoolAt, idPoolAt + ID_BYTES);
  idPoolAt += ID_BYTES;
  return `${prefix}_${hex}`;
};

export interface ProviderRow {
  id: string;
  kind: "payment_intent" | "refund";
  amount: string | number;
  currency: string;
  status: string;
  metadata: Record<string, string>;
  payment_intent: string | null;
  created: string | number;
}

export function toStripe(row: ProviderRow): Record<string, unknown> {
  const common = {
    id: row.id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status,
    metadata: row.metadata,
    created: Number(row.created),
    livemode: false,
  };
  return row.kind === "payment_intent"
    ? { object: "payment_intent", ...common, amount_received: row.status === "succeeded" ? Number(row.amount) : 0 }
    : { object: "refund", ...common, payment_intent: row.payment_intent };
}

interface SeedObject {
  id: string;
  kind?: "payment_intent" | "refund";
  amount: number;
  currency?: string;
  status?: string;
  metadata?: Record<string, string>;
  /** Seconds since the epoch. */
  created: number;
}

/** Bulk-loads objects into the provider's storage (tests and the benchmark: a million objects without a million requests). */
export async function seedProviderObjects(db: pg.Pool, objects: SeedObject[]): Promise<void> {
  for (let i = 0; i < objects.length; i += 10_000) {
    const batch = objects.slice(i, i + 10_000).map((o) => ({
      id: o.id,
      kind: o.kind ?? "payment_intent",
      amount: o.amount,
      currency: o.currency ?? "usd",
      status: o.status ?? "succeeded",
      metadata: o.metadata ?? {},
      created: o.created,
    }));
    await db.query(
      `INSERT INTO ${PROVIDER_SCHEMA}.objects (id, kind, amount, currency, status, metadata, created)
       SELECT id, kind, amount, currency, status, metadata, created
         FROM jsonb_to_recordset($1::jsonb) AS o(id text, kind text, amount bigint, currency text, status text, metadata jsonb, created bigint)`,
      [JSON.stringify(batch)],
    );
  }
}
