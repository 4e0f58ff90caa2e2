/**
 * The baseline every claim benchmark compares against: a raw `INSERT … ON CONFLICT DO NOTHING
 * RETURNING` into an unpartitioned table, its row as wide as an effects row, so a comparison is
 * about the claim logic and not the row. One definition for bench:claims, bench:peers and bench:floor.
 */
export const RAW_TABLE = `CREATE TABLE raw_claims (
  tenant_id text NOT NULL, key text NOT NULL, job_type text NOT NULL, status text NOT NULL, policy text NOT NULL,
  attempt integer NOT NULL DEFAULT 1, owner text, lease_until timestamptz, first_message_id text, last_message_id text,
  request_hash text, created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key))`;

/** Values: tenant, key, owner, message id. Returns the key when inserted, no row on a conflict. */
export const RAW_INSERT = {
  name: "bench_raw_insert",
  text: `INSERT INTO raw_claims (tenant_id, key, job_type, status, policy, owner, lease_until, first_message_id, last_message_id)
         VALUES ($1, $2, 'bench', 'in_progress', 'once', $3, now() + interval '30 seconds', $4, $4)
         ON CONFLICT DO NOTHING RETURNING key`,
};
