import type { Scope } from "../../auth/scope";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
import { Keyset } from "../../console/keyset";
import { type AppliedStateFilter, appliedFields, applyStateFilter, type StateFilter } from "./state-filter";
import type { KeyReuseListResponse, KeyReuseRefusal } from "./states-contract";
import { chunkDeliveryColumns } from "./timeline-chunk-sql";

/**
 * The deliveries the library refused because their key had first come with another payload (the
 * claim answered key_reuse, the worker threw EffectKeyReuseError, the adapter dead-lettered the
 * message). The library records them where it records every delivery: the delivery timeline
 * (library migration 0010, written by each worker in the background), one element of a chunk's
 * parallel arrays each. The metrics (idem_key_reuse_total) and the minute rollups count them
 * without a key; this is the only record that names one.
 *
 * What that record is, and so what this list can say: the timeline is UNLOGGED (a PostgreSQL crash
 * empties it), a worker killed between two flushes loses its unflushed deliveries, a worker started
 * with `timeline: false` records none, and the refused payload's hash is not kept (the effect keeps
 * the first payload's). The page says so beside the list.
 */

// Every refused delivery of the filter, one row each. A refusal is never a first delivery, so only
// the chunks of later deliveries (later_keys set) are read, and of those only the ones whose answers
// hold a key_reuse (the chunk's arrays are read once to test it). A chunk lies within one UTC hour
// and first_at is its earliest delivery, so a delivery at or after $2 sits in a chunk whose first_at
// is less than an hour before $2: that bound prunes the partitions. A column holding one element
// holds the value every delivery of its chunk shares (migration 0015), as in the key's timeline
// (get-effect.ts).
// Params: $1 tenant or NULL, $2 from, $3 to, $4 job type or NULL.
const REFUSED = `
refused AS (
  SELECT d.delivered_at, c.chunk_id::text AS chunk_id, k.n, d.tenant_id, k.key, d.job_type, d.message_id,
         d.delivery_attempt, d.effect_attempt, c.worker_id
    FROM delivery_timeline c
   CROSS JOIN LATERAL unnest(c.keys) WITH ORDINALITY AS k(key, n)
   CROSS JOIN LATERAL (
          SELECT ${chunkDeliveryColumns(["tenant_id", "job_type", "delivered_at", "answer", "message_id", "delivery_attempt", "effect_attempt"])}) d
   WHERE c.later_keys IS NOT NULL
     AND 'key_reuse' = ANY (c.answers)
     AND c.first_at > $2::timestamptz - interval '1 hour' AND c.first_at < $3::timestamptz
     AND ($1::text IS NULL OR $1::text = ANY (c.tenants))
     AND d.answer = 'key_reuse'
     AND d.delivered_at >= $2::timestamptz AND d.delivered_at < $3::timestamptz
     AND ($1::text IS NULL OR d.tenant_id = $1::text)
     AND ($4::text IS NULL OR d.job_type = $4::text)
)`;

/** Newest first; a chunk's own id and the delivery's place in it break ties of one instant. */
export const KEY_REUSE_KEYSET = new Keyset("key-reuse", [
  { column: "r.delivered_at", type: "timestamptz" },
  { column: "r.chunk_id", type: "text" },
  { column: "r.n", type: "bigint" },
]);

const COUNT = `WITH ${REFUSED} SELECT count(*)::int AS n FROM refused r`;

const LIST = `WITH ${REFUSED}
SELECT r.*, ${KEY_REUSE_KEYSET.cursorColumns}
  FROM refused r
 WHERE ${KEY_REUSE_KEYSET.after(5)}
 ORDER BY ${KEY_REUSE_KEYSET.orderBy}
 LIMIT $${5 + KEY_REUSE_KEYSET.columns.length}::int`;

const filterValues = (f: AppliedStateFilter) => [f.tenant, f.from, f.to, f.jobType];

// The same on MySQL, whose timeline is a row per delivery (delivered_at, chunk_id, seq): a
// delivery's place in its worker's flush (seq) stands for its place in a chunk (n), so the keyset
// and the ids are the same shape. Params: from, to, tenant (twice), job type (twice).
const REFUSED_MYSQL = `
SELECT delivered_at, chunk_id, seq AS n, tenant_id, \`key\`, job_type, message_id, delivery_attempt, effect_attempt, worker_id
  FROM delivery_timeline
 WHERE answer = 'key_reuse' AND delivered_at >= ? AND delivered_at < ?
   AND (? IS NULL OR tenant_id = ?) AND (? IS NULL OR job_type = ?)`;
const COUNT_MYSQL = `SELECT count(*) AS n FROM (${REFUSED_MYSQL}) r`;
const listMysql = (after: string) => `
SELECT r.*, ${KEY_REUSE_KEYSET.mysqlCursorColumns}
  FROM (${REFUSED_MYSQL}) r
 WHERE ${after}
 ORDER BY ${KEY_REUSE_KEYSET.mysqlOrderBy}
 LIMIT ?`;
const filterValuesMysql = (f: AppliedStateFilter) => [f.from, f.to, f.tenant, f.tenant, f.jobType, f.jobType];

/** How many refusals the filter holds: the count beside the states' (the list below pages through the same rows). */
export async function countKeyReuseRefusals(filter: AppliedStateFilter, db: EffectsSource): Promise<number> {
  const [row] = await byEngine(db, {
    postgres: async (pg) => (await pg.query<{ n: number }>(COUNT, filterValues(filter))).rows,
    mysql: (my) => my.query<{ n: number }>(COUNT_MYSQL, filterValuesMysql(filter)),
  });
  return Number(row?.n ?? 0);
}

interface RefusalRow {
  chunk_id: string;
  n: string | number;
  delivered_at: Date;
  tenant_id: string;
  key: string;
  job_type: string;
  message_id: string | null;
  delivery_attempt: number | null;
  effect_attempt: number;
  worker_id: string;
}

/** GET /api/v1/key-reuse-refusals: the filter's refused deliveries, newest first, a keyset page. */
export async function listKeyReuseRefusals(
  scope: Scope,
  input: StateFilter & { cursor?: string; limit: number },
  db: EffectsSource = effectsStore(),
): Promise<KeyReuseListResponse> {
  const applied = applyStateFilter(scope, input);
  const rows = await byEngine(db, {
    postgres: async (pg) =>
      (await pg.query<RefusalRow>(LIST, [...filterValues(applied), ...KEY_REUSE_KEYSET.values(input.cursor), input.limit + 1]))
        .rows,
    mysql: (my) => {
      const after = KEY_REUSE_KEYSET.mysqlAfter(input.cursor);
      return my.query<RefusalRow>(listMysql(after.sql), [...filterValuesMysql(applied), ...after.values, input.limit + 1]);
    },
  });
  const page = KEY_REUSE_KEYSET.page(rows, input.limit);
  return { ...appliedFields(applied), refusals: page.rows.map(toRefusal), nextCursor: page.nextCursor };
}

function toRefusal(r: RefusalRow): KeyReuseRefusal {
  return {
    id: `${r.chunk_id}:${r.n}`,
    deliveredAt: r.delivered_at.toISOString(),
    tenant: r.tenant_id,
    key: r.key,
    jobType: r.job_type,
    messageId: r.message_id,
    deliveryAttempt: r.delivery_attempt,
    effectAttempt: r.effect_attempt,
    worker: r.worker_id,
  };
}
