import { DEFAULT_SCHEMA } from "../idempotency";
import { schemaNameOf } from "../idempotency/admin";
import type { Queryable } from "./types";

/** Days are UTC calendar days: partition bounds are UTC midnights. */
export function utcDay(date: Date, offsetDays = 0): string {
  const d = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + offsetDays));
  return d.toISOString().slice(0, 10);
}

/**
 * Makes the daily effects partitions from `back` days ago to `ahead` days from now. Idempotent and
 * safe to run from several processes at once (serialised inside onceboard_ensure_partitions).
 */
export async function ensureEffectPartitions(
  db: Queryable,
  {
    back = 1,
    ahead = 7,
    now = new Date(),
    schema = DEFAULT_SCHEMA,
  }: { back?: number; ahead?: number; now?: Date; schema?: string } = {},
): Promise<number> {
  const { rows } = await db.query<{ created: number }>(
    `SELECT ${schemaNameOf(schema)}.onceboard_ensure_partitions($1::date, $2::date) AS created`,
    [utcDay(now, -back), utcDay(now, ahead)],
  );
  return rows[0]?.created ?? 0;
}
