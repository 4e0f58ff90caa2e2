import { setTimeout as sleep } from "node:timers/promises";
import pg, { escapeIdentifier, escapeLiteral } from "pg";
import { schemaNameOf } from "../idempotency/admin";

/**
 * Two database roles. The owner (DATABASE_URL's user, or the embedded server's superuser) runs the
 * migrations and owns the schema, the audit log, its chain head and every function. The console
 * connects as the console role, which may INSERT and SELECT audit_log and nothing more there: it
 * cannot UPDATE, DELETE or TRUNCATE it, cannot ALTER, DISABLE or DROP its triggers or the table,
 * cannot replace the trigger functions (it owns none of them, nor the schema) and, not being a
 * superuser, cannot SET session_replication_role to skip the triggers.
 *
 * Everything else it needs is granted here, after each migration run: the rows of the library's
 * and the console's other tables, sequences and functions, and default privileges so that tables
 * the owner makes later (new library migrations) are reachable too. The effects table and its
 * partitions are the console role's own: partition maintenance (CREATE … PARTITION OF, ATTACH,
 * DETACH, DROP) needs their owner, and the console runs it.
 */

/** The console role the embedded default creates (DATABASE_URL users name theirs in CONSOLE_DATABASE_URL). */
export const EMBEDDED_CONSOLE_ROLE = "onceboard_console";

/** Tables in the library's schema the console role may only read (and, for audit_log, append to). */
const APPEND_ONLY_TABLES = ["audit_log"] as const;
/** The chain's head (the insert trigger moves it) and both chains' migration records (the owner's). */
const READ_ONLY_TABLES = ["audit_chain_head", "_prisma_migrations", "migrations"] as const;

export class ConsoleRoleError extends Error {
  readonly code = "CONSOLE_ROLE";
}

/** The role a connection URL logs in as. */
export function roleOfUrl(url: string): string {
  return decodeURIComponent(new URL(url).username) || "postgres";
}

/** `url` logging in as `role` with `password` instead. */
export function urlAsRole(url: string, role: string, password?: string): string {
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(role);
  parsed.password = password === undefined ? "" : encodeURIComponent(password);
  return parsed.toString();
}

/**
 * Creates the console role when it is missing (a login role with none of the powers that would
 * undo the audit log's protection), and sets its password. Safe when several processes run it at once.
 */
export async function ensureConsoleRole(owner: pg.ClientBase, role: string, password?: string): Promise<void> {
  const attributes = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS";
  await owner.query(`DO $$
BEGIN
  CREATE ROLE ${escapeIdentifier(role)} ${attributes};
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL;
END;
$$`);
  // An existing role keeps no power it should not have. Test runs sharing a server may alter the
  // same role at once ("tuple concurrently updated"): the loser tries again.
  const alter = `ALTER ROLE ${escapeIdentifier(role)} ${attributes}${password === undefined ? "" : ` PASSWORD ${escapeLiteral(password)}`}`;
  for (let attempt = 1; ; attempt++) {
    try {
      await owner.query(alter);
      return;
    } catch (error) {
      if (attempt >= 5 || !/concurrently/.test(error instanceof Error ? error.message : "")) throw error;
      await sleep(50 * attempt);
    }
  }
}

/**
 * Grants the console role what the console needs in the library's schema and takes away what it
 * must not have on the audit log (lib/db/roles.ts header). Idempotent; run as the owner after
 * migrate() at every start, so objects a new migration made are covered too.
 */
export async function grantConsoleRole(owner: pg.ClientBase, role: string, options: { schema?: string } = {}): Promise<void> {
  const schema = escapeIdentifier(schemaNameOf(options.schema));
  const grantee = escapeIdentifier(role);
  const tables = (names: readonly string[]) => names.map((name) => `${schema}.${escapeIdentifier(name)}`).join(", ");
  await owner.query("BEGIN");
  try {
    // CREATE: partition maintenance makes new effects partitions in the schema. It does not let
    // the role drop or alter what it does not own.
    await owner.query(`GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${grantee}`);
    await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${grantee}`);
    await owner.query(`GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${grantee}`);
    await owner.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schema} TO ${grantee}`);
    await owner.query(
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${grantee}`,
    );
    await owner.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO ${grantee}`);
    await owner.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT EXECUTE ON FUNCTIONS TO ${grantee}`);
    await owner.query(`REVOKE ALL ON ${tables([...APPEND_ONLY_TABLES, ...READ_ONLY_TABLES])} FROM ${grantee}`);
    await owner.query(`GRANT SELECT, INSERT ON ${tables(APPEND_ONLY_TABLES)} TO ${grantee}`);
    await owner.query(`GRANT SELECT ON ${tables(READ_ONLY_TABLES)} TO ${grantee}`);
    await owner.query(`SELECT set_config('onceboard.console_role', $1, true), set_config('onceboard.schema', $2, true)`, [
      role,
      schemaNameOf(options.schema),
    ]);
    // The effects table, the delivery timeline beside it, and every partition of each (those the
    // owner made at startup included): maintenance creates and drops them.
    await owner.query(`DO $$
DECLARE
  part regclass;
BEGIN
  FOR part IN
    SELECT c.oid::regclass
      FROM pg_class c
      JOIN unnest(ARRAY['effects', 'delivery_timeline']) AS t(name)
        ON c.oid = to_regclass(format('%I.%I', current_setting('onceboard.schema'), t.name))
        OR c.oid IN (SELECT inhrelid FROM pg_inherits
                      WHERE inhparent = to_regclass(format('%I.%I', current_setting('onceboard.schema'), t.name)))
  LOOP
    EXECUTE format('ALTER TABLE %s OWNER TO %I', part, current_setting('onceboard.console_role'));
  END LOOP;
END;
$$`);
    await owner.query("COMMIT");
  } catch (error) {
    await owner.query("ROLLBACK").catch(() => {});
    const message = error instanceof Error ? error.message : String(error);
    const code = (error as { code?: string }).code;
    throw new ConsoleRoleError(
      code === "42501"
        ? `cannot hand the effects partitions to the console role ${role} (${message}): as a superuser, GRANT ${role} TO the owner that migrates (README: Using an existing PostgreSQL)`
        : `cannot set up the console role ${role}: ${message}`,
      { cause: error },
    );
  }
}

/**
 * Schemas the console role owns outright: the demo's tables and its pg-boss queues (the demo's
 * workers connect as the console role; pg-boss creates its schema and maintains its own tables,
 * hence CREATE on the database, which lets the role make schemas of its own and nothing more).
 * An existing one, and everything in it, is handed over.
 */
export async function giveSchemasToConsoleRole(owner: pg.ClientBase, role: string, schemas: readonly string[]): Promise<void> {
  const { rows } = await owner.query<{ database: string }>("SELECT current_database() AS database");
  await owner.query(`GRANT CREATE ON DATABASE ${escapeIdentifier(rows[0]?.database ?? "")} TO ${escapeIdentifier(role)}`);
  for (const schema of schemas) {
    const exists = await owner.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (exists.rowCount === 0) continue;
    await owner.query(`SELECT set_config('onceboard.console_role', $1, false), set_config('onceboard.give_schema', $2, false)`, [
      role,
      schema,
    ]);
    await owner.query(`DO $$
DECLARE
  target text := current_setting('onceboard.console_role');
  nsp oid := (SELECT oid FROM pg_namespace WHERE nspname = current_setting('onceboard.give_schema'));
  obj record;
BEGIN
  EXECUTE format('ALTER SCHEMA %I OWNER TO %I', current_setting('onceboard.give_schema'), target);
  -- Tables, views and free-standing sequences (a table takes its indexes and owned sequences along).
  FOR obj IN
    SELECT c.oid::regclass AS name, c.relkind
      FROM pg_class c
     WHERE c.relnamespace = nsp AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
       AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d
                 WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')))
  LOOP
    EXECUTE format(CASE obj.relkind WHEN 'S' THEN 'ALTER SEQUENCE %s OWNER TO %I' WHEN 'v' THEN 'ALTER VIEW %s OWNER TO %I'
                   WHEN 'm' THEN 'ALTER MATERIALIZED VIEW %s OWNER TO %I' ELSE 'ALTER TABLE %s OWNER TO %I' END, obj.name, target);
  END LOOP;
  FOR obj IN SELECT p.oid::regprocedure AS name, p.prokind FROM pg_proc p WHERE p.pronamespace = nsp LOOP
    EXECUTE format(CASE obj.prokind WHEN 'p' THEN 'ALTER PROCEDURE %s OWNER TO %I' ELSE 'ALTER ROUTINE %s OWNER TO %I' END, obj.name, target);
  END LOOP;
  FOR obj IN
    SELECT t.oid::regtype AS name FROM pg_type t
     WHERE t.typnamespace = nsp
       AND (t.typtype IN ('e', 'd', 'r') OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
  LOOP
    EXECUTE format('ALTER TYPE %s OWNER TO %I', obj.name, target);
  END LOOP;
END;
$$`);
  }
}

/**
 * What is wrong with the role `consoleUrl` logs in as, for the audit log's sake: it is a superuser,
 * or owns audit_log (or is a member of its owner, with the same powers). Undefined when it is as it should be.
 */
export async function consoleRoleProblem(consoleUrl: string, options: { schema?: string } = {}): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: consoleUrl, application_name: "onceboard-role-check" });
  await client.connect();
  try {
    const { rows } = await client.query<{ role: string; superuser: boolean; owner: string | null; owns: boolean | null }>(
      `SELECT current_user AS role, r.rolsuper AS superuser, o.rolname AS owner,
              pg_has_role(current_user, c.relowner, 'USAGE') AS owns
         FROM pg_roles r
         LEFT JOIN pg_class c ON c.oid = to_regclass(format('%I.audit_log', $1::text))
         LEFT JOIN pg_roles o ON o.oid = c.relowner
        WHERE r.rolname = current_user`,
      [schemaNameOf(options.schema)],
    );
    const row = rows[0];
    if (!row) return undefined;
    const fix = "set CONSOLE_DATABASE_URL to a role that does not own it (README: Using an existing PostgreSQL)";
    if (row.superuser) return `the console connects as ${row.role}, a superuser: it can rewrite the audit log; ${fix}`;
    if (row.owns) {
      const owner = row.owner === row.role ? "owns audit_log" : `is a member of ${row.owner}, which owns audit_log`;
      return `the console connects as ${row.role}, which ${owner}: it can rewrite the audit log; ${fix}`;
    }
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}
