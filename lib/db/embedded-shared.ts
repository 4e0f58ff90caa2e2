/** What every part of the embedded PostgreSQL shares: its one error, root's runtime directory, the owner file. */

/** Names the process that started the cluster's server (a stale one is recovered: embedded-cluster.ts). */
export const OWNER_FILE = "onceboard.owner";

/**
 * Only as root: where the PostgreSQL binaries are copied and clusters are kept when the `postgres`
 * user cannot reach the checkout (a clone under /root or in a `mktemp -d` directory, mode 0700).
 * Root-owned and not writable by anyone else; each cluster in it is the `postgres` user's, 0700.
 */
export const ROOT_RUNTIME_DIR = "/var/lib/onceboard";

/** One line, whatever failed: an EmbeddedPostgresError's message is what the user sees. */
export class EmbeddedPostgresError extends Error {
  readonly code = "EMBEDDED_POSTGRES";
}
