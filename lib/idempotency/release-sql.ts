import type { Statement } from "./db";

// The claim's advisory lock, on the same key onceboard_claim computes (sql/onceboard_claim.sql:
// hashtextextended(tenant || chr(1) || key, 0)), so a release and a takeover never interleave.
export const LOCK_EFFECT: Statement = {
  name: "onceboard_lock_effect_v1",
  returns: "count",
  text: "SELECT pg_advisory_xact_lock(hashtextextended($1::text || chr(1) || $2::text, 0))",
};

// Only an in-progress claim, never an at-most-once step, and (unless forced) only once its lease
// has expired. Marked failed, so the next delivery takes it over at once (attempt + 1), exactly as
// after a failed attempt. created_at bounds the scan to the live partitions, as the claim does.
export const RELEASE_EFFECT: Statement = {
  name: "onceboard_release_effect_v1",
  returns: "rows",
  text: `UPDATE onceboard.effects
   SET status = 'failed', lease_until = NULL, updated_at = clock_timestamp(),
       error = 'released by ' || $3::text || CASE WHEN lease_until <= clock_timestamp()
         THEN ' after the lease of attempt ' || attempt || ' (' || coalesce(owner, '?') || ') expired'
         ELSE ' while the lease of attempt ' || attempt || ' (' || coalesce(owner, '?') || ') was alive' END
 WHERE tenant_id = $1::text AND key = $2::text AND created_at <= now() + interval '1 minute'
   AND status = 'in_progress' AND policy <> 'at_most_once'
   AND ($4::boolean OR lease_until <= clock_timestamp())
RETURNING attempt`,
};

// What a refused release found, to say why.
export const LOOK_EFFECT: Statement = {
  name: "onceboard_look_effect_v1",
  returns: "rows",
  text: `SELECT status, policy, lease_until, owner, attempt FROM onceboard.effects
 WHERE tenant_id = $1::text AND key = $2::text AND created_at <= now() + interval '1 minute' LIMIT 1`,
};

// The release on Citus (sql/onceboard_release_tenant.sql): the lock, the same guards and the look, in
// one function delegated to the tenant's worker. One row (released, or what a refusal found), or none.
export const RELEASE_TENANT: Statement = {
  name: "onceboard_release_tenant_v1",
  returns: "rows",
  text: `SELECT released, status, policy, lease_until, owner, attempt
  FROM onceboard.onceboard_release_tenant($1::text, $2::text, $3::text, $4::boolean)`,
};
