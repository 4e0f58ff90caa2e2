import type pg from "pg";
import type { Operation } from "./maintenance-operation";
import { listPartitions } from "./maintenance-plan";
import {
  createTimelinePartition,
  dropTable,
  LIST_TIMELINE_PARTITIONS,
  LOCK_PARTITIONS,
  partitionsLockKey,
  timelinePartitionName,
} from "./maintenance-sql";

interface TimelinePartitionRow {
  name: string;
  range_from: Date | null;
  range_to: Date | null;
}

const sameRange = (a: { range_from: Date | null; range_to: Date | null }, b: typeof a) =>
  a.range_from?.getTime() === b.range_from?.getTime() && a.range_to?.getTime() === b.range_to?.getTime();

/**
 * Keeps delivery_timeline's partitions in step with effects': every effects partition gets a
 * timeline partition of the same bounds (the premade ones included, so deliveries always have one),
 * and a timeline partition whose effects partition is gone (dropped by this run or an earlier one)
 * is dropped, once its range is past. Decided from the catalog each run, so an interrupted run, a
 * re-attached effects partition or a changed interval is simply picked up by the next one.
 *
 * Each change is one short transaction under the partitions lock, bounded by lock_timeout: CREATE
 * … PARTITION OF and DROP take the parent's lock, which only timeline flushes (in the background)
 * and the key page's read wait for, never a claim. A change that times out is retried next run.
 */
export async function syncTimelinePartitions(
  client: pg.PoolClient,
  schema: string,
  now: Date,
  lockTimeoutMs: number,
  ops: Operation[],
): Promise<void> {
  const change = async (kind: "create" | "drop", name: string, ddl: string, detail: string) => {
    await client.query("BEGIN");
    try {
      await client.query(LOCK_PARTITIONS, [partitionsLockKey(schema)]);
      await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
      await client.query(ddl);
      await client.query("COMMIT");
      ops.push({ kind, partition: name, result: "ok", detail });
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      ops.push({ kind, partition: name, result: "failed", detail: (error as Error).message });
      throw error;
    }
  };
  const effects = (await listPartitions(client)).filter((p) => p.range_from && p.range_to);
  const timeline = (await client.query<TimelinePartitionRow>(LIST_TIMELINE_PARTITIONS)).rows;
  let failure: unknown = null;
  for (const p of effects) {
    if (p.detach_pending || timeline.some((t) => sameRange(t, p))) continue;
    const from = p.range_from as Date;
    const to = p.range_to as Date;
    const name = timelinePartitionName(p.name);
    await change("create", name, createTimelinePartition(schema, name, from, to), `beside ${p.name}`).catch((error) => {
      failure ??= error;
    });
  }
  for (const t of timeline) {
    if (!t.range_to || t.range_to.getTime() > now.getTime() || effects.some((p) => sameRange(t, p))) continue;
    await change("drop", t.name, dropTable(schema, t.name), "its effects partition was dropped").catch((error) => {
      failure ??= error;
    });
  }
  if (failure) throw failure;
}
