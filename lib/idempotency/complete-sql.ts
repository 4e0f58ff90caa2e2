import { byTenant } from "./citus";
import type { Sql, Statement } from "./db";

/** Names one claim: the row (tenant, key, created_at) and the owner/attempt that holds it. */
export interface ClaimRef {
  tenant: string;
  key: string;
  createdAt: Date;
  owner: string;
  attempt: number;
}

// Every statement below names the row by (tenant_id, key, created_at): created_at, the partition
// key, lets PostgreSQL prune to the one partition holding it, whose unique index on
// (tenant_id, key) finds the row (effects has no primary key since 20261130030000_faster_claims).
// And by (owner, attempt), so a worker whose lease expired
// and was taken over cannot overwrite the new owner's row: it updates nothing, and the library
// raises LeaseLostError. created_at is passed as ISO text; claims store it truncated to
// milliseconds, so it round-trips through a JavaScript Date exactly.
const WHERE = `tenant_id = $1::text AND key = $2::text AND created_at = $3::timestamptz AND owner = $4::text AND attempt = $5::int`;

// 'completed' is matched too so that re-sending a completion whose reply was lost reports
// success; but a completed row keeps its outcome, error and completed_at: a stored outcome is
// never replaced (duplicates already returned it).
export const COMPLETE: Statement = {
  name: "onceboard_complete_v2",
  returns: "count",
  text: `UPDATE onceboard.effects
   SET outcome = CASE WHEN status = 'completed' THEN outcome ELSE $6::jsonb END,
       error = CASE WHEN status = 'completed' THEN error ELSE $7::text END,
       completed_at = CASE WHEN status = 'completed' THEN completed_at ELSE clock_timestamp() END,
       status = 'completed', lease_until = NULL, updated_at = clock_timestamp()
 WHERE ${WHERE} AND status IN ('in_progress', 'completed')`,
};

// The outcome of a claim its own transaction wrote completed with an empty outcome
// (ClaimParams.completed): the row is this transaction's, so its empty outcome is replaced.
const COMPLETE_WRITTEN: Statement = {
  name: "onceboard_complete_written_v1",
  returns: "count",
  text: `UPDATE onceboard.effects
   SET outcome = $6::jsonb, error = $7::text, completed_at = statement_timestamp(), updated_at = statement_timestamp()
 WHERE ${WHERE} AND status = 'completed'`,
};

// Many completions in one round trip and one commit (a batch's owned claims, effects.completeMany):
// each row is named and guarded exactly as COMPLETE names it. It returns the claims still ours,
// by their whole ref: a coalesced batch may hold a taken-over claim and its new owner's, of one key;
// a claim missing from it was taken over (LeaseLostError for that claim only).
export const COMPLETE_BATCH: Statement = {
  name: "onceboard_complete_batch_v3",
  returns: "rows",
  // One UPDATE inside the function, its plan pinned (lib/idempotency/sql/onceboard_complete_batch.sql says why).
  text: `SELECT o_tenant_id AS tenant_id, o_key AS key, o_owner AS owner, o_attempt AS attempt
  FROM onceboard.onceboard_complete_batch($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::int[], $6::jsonb[], $7::text[])`,
};

// A failed attempt releases the claim at once: the next delivery retries it (attempt + 1)
// without waiting for the lease to run out.
export const FAIL: Statement = {
  name: "onceboard_fail_v1",
  returns: "count",
  text: `UPDATE onceboard.effects
   SET status = 'failed', error = $6::text, lease_until = NULL, updated_at = clock_timestamp()
 WHERE ${WHERE} AND status IN ('in_progress', 'failed')`,
};

// An at-most-once step that threw may have had its effect (the provider took the email, then the
// reply was lost): the claim ends abandoned, never run again. 'abandoned' is matched too so that
// re-sending it after a lost reply reports success.
const ABANDON: Statement = {
  name: "onceboard_abandon_v1",
  returns: "count",
  text: `UPDATE onceboard.effects
   SET status = 'abandoned', error = $6::text, lease_until = NULL, updated_at = clock_timestamp()
 WHERE ${WHERE} AND status IN ('in_progress', 'abandoned')`,
};

// Many failures in one round trip and one commit (coalesced claim.fail() calls): each row named and
// guarded exactly as FAIL names it; it returns the claims still ours, by their whole ref.
export const FAIL_BATCH: Statement = {
  name: "onceboard_fail_batch_v2",
  returns: "rows",
  text: `SELECT o_tenant_id AS tenant_id, o_key AS key, o_owner AS owner, o_attempt AS attempt
  FROM onceboard.onceboard_fail_batch($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::int[], $6::text[])`,
};

// The time is the statement's start, taken once: Citus refuses a volatile function such as
// clock_timestamp() in an UPDATE on a distributed table, and evaluates statement_timestamp() on the
// coordinator before routing the row's update to its worker.
export const EXTEND_LEASE: Statement = {
  name: "onceboard_extend_lease_v2",
  returns: "rows",
  text: `UPDATE onceboard.effects
   SET lease_until = statement_timestamp() + $6::int * interval '1 millisecond', updated_at = statement_timestamp()
 WHERE ${WHERE} AND status = 'in_progress'
RETURNING lease_until`,
};

function refValues(ref: ClaimRef): unknown[] {
  return [ref.tenant, ref.key, ref.createdAt.toISOString(), ref.owner, ref.attempt];
}

// One tenant's completions and failures, for Citus (sql/onceboard_complete_tenant.sql,
// sql/onceboard_fail_tenant.sql): COMPLETE, FAIL and ABANDON use clock_timestamp() in their SET and
// CASE, which Citus refuses on a distributed table; these take the time once into a variable, on
// the tenant's worker (each call is delegated whole).
const COMPLETE_TENANT: Statement = {
  name: "onceboard_complete_tenant_v1",
  returns: "rows",
  text: `SELECT o_tenant_id AS tenant_id, o_key AS key, o_owner AS owner, o_attempt AS attempt
  FROM onceboard.onceboard_complete_tenant($1::text, $2::text[], $3::timestamptz[], $4::text[], $5::int[], $6::jsonb[], $7::text[])`,
};

const FAIL_TENANT: Statement = {
  name: "onceboard_fail_tenant_v1",
  returns: "rows",
  text: `SELECT o_tenant_id AS tenant_id, o_key AS key, o_owner AS owner, o_attempt AS attempt
  FROM onceboard.onceboard_fail_tenant($1::text, $2::text[], $3::timestamptz[], $4::text[], $5::int[], $6::text[], $7::text)`,
};

/** Completions on Citus: one delegated call per tenant, at once; which were still ours, by index. */
async function runCompleteTenants(
  sql: Sql,
  items: readonly { ref: ClaimRef; outcomeJson: string; error: string | null }[],
): Promise<boolean[]> {
  const rows = await perTenant(items, (tenant, group) =>
    sql.run<StillOurs>(COMPLETE_TENANT, [
      tenant,
      ...refArrays(group.map((i) => i.ref)).slice(1),
      group.map((i) => i.outcomeJson),
      group.map((i) => i.error),
    ]),
  );
  return stillOurs(
    items.map((i) => i.ref),
    rows,
  );
}

/** Failures ('failed') or abandons ('abandoned') on Citus, as runCompleteTenants sends completions. */
async function runFailTenants(
  sql: Sql,
  items: readonly { ref: ClaimRef; message: string }[],
  status: "failed" | "abandoned",
): Promise<boolean[]> {
  const rows = await perTenant(items, (tenant, group) =>
    sql.run<StillOurs>(FAIL_TENANT, [
      tenant,
      ...refArrays(group.map((i) => i.ref)).slice(1),
      group.map((i) => i.message.slice(0, 2000)),
      status,
    ]),
  );
  return stillOurs(
    items.map((i) => i.ref),
    rows,
  );
}

async function perTenant<T extends { ref: ClaimRef }>(
  items: readonly T[],
  send: (tenant: string, group: T[]) => Promise<{ rows: StillOurs[] }>,
): Promise<StillOurs[]> {
  const groups = [...byTenant(items, (i) => i.ref.tenant)];
  const results = await Promise.all(
    groups.map(([tenant, indexes]) =>
      send(
        tenant,
        indexes.map((i) => items[i] as T),
      ),
    ),
  );
  return results.flatMap((r) => r.rows);
}

/** Returns false when the claim is no longer ours (taken over). */
export async function runComplete(
  sql: Sql,
  ref: ClaimRef,
  outcomeJson: string,
  error: string | null,
  citus = false,
  replacesEmpty = false,
): Promise<boolean> {
  if (replacesEmpty) return (await sql.run(COMPLETE_WRITTEN, [...refValues(ref), outcomeJson, error])).rowCount === 1;
  if (citus) return (await runCompleteTenants(sql, [{ ref, outcomeJson, error }]))[0] === true;
  const { rowCount } = await sql.run(COMPLETE, [...refValues(ref), outcomeJson, error]);
  return rowCount === 1;
}

/** Which of `items` were completed (still ours), by index. */
export async function runCompleteBatch(
  sql: Sql,
  items: readonly { ref: ClaimRef; outcomeJson: string; error: string | null }[],
  citus = false,
): Promise<boolean[]> {
  if (citus) return runCompleteTenants(sql, items);
  const { rows } = await sql.run<StillOurs>(COMPLETE_BATCH, [
    ...refArrays(items.map((i) => i.ref)),
    items.map((i) => i.outcomeJson),
    items.map((i) => i.error),
  ]);
  return stillOurs(
    items.map((i) => i.ref),
    rows,
  );
}

/** Which of `items` were released as failed (still ours), by index. */
export async function runFailBatch(
  sql: Sql,
  items: readonly { ref: ClaimRef; message: string }[],
  citus = false,
): Promise<boolean[]> {
  if (citus) return runFailTenants(sql, items, "failed");
  const { rows } = await sql.run<StillOurs>(FAIL_BATCH, [
    ...refArrays(items.map((i) => i.ref)),
    items.map((i) => i.message.slice(0, 2000)),
  ]);
  return stillOurs(
    items.map((i) => i.ref),
    rows,
  );
}

interface StillOurs {
  tenant_id: string;
  key: string;
  owner: string;
  attempt: number;
}

function refArrays(refs: readonly ClaimRef[]): unknown[] {
  return [
    refs.map((r) => r.tenant),
    refs.map((r) => r.key),
    refs.map((r) => r.createdAt.toISOString()),
    refs.map((r) => r.owner),
    refs.map((r) => r.attempt),
  ];
}

function stillOurs(refs: readonly ClaimRef[], rows: readonly StillOurs[]): boolean[] {
  const done = new Set(rows.map((r) => JSON.stringify([r.tenant_id, r.key, r.owner, Number(r.attempt)])));
  return refs.map((r) => done.has(JSON.stringify([r.tenant, r.key, r.owner, r.attempt])));
}

export async function runFail(sql: Sql, ref: ClaimRef, error: string, citus = false): Promise<boolean> {
  if (citus) return (await runFailTenants(sql, [{ ref, message: error }], "failed"))[0] === true;
  const { rowCount } = await sql.run(FAIL, [...refValues(ref), error.slice(0, 2000)]);
  return rowCount === 1;
}

export async function runAbandon(sql: Sql, ref: ClaimRef, error: string, citus = false): Promise<boolean> {
  if (citus) return (await runFailTenants(sql, [{ ref, message: error }], "abandoned"))[0] === true;
  const { rowCount } = await sql.run(ABANDON, [...refValues(ref), error.slice(0, 2000)]);
  return rowCount === 1;
}

/** The new lease end, or null when the claim is no longer ours. */
export async function runExtendLease(sql: Sql, ref: ClaimRef, leaseMs: number): Promise<Date | null> {
  const { rows } = await sql.run<{ lease_until: Date | string }>(EXTEND_LEASE, [
    ...refValues(ref),
    Math.max(1, Math.round(leaseMs)),
  ]);
  const row = rows[0];
  if (!row) return null;
  return row.lease_until instanceof Date ? row.lease_until : new Date(row.lease_until);
}
