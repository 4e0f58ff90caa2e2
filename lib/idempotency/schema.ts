import { InvalidEffectsOptionsError } from "./errors";

/**
 * The PostgreSQL schema that holds everything the library needs (the effects table, rollups,
 * functions), as pg-boss and graphile-worker keep theirs: `onceboard` unless configured.
 *
 * Every statement and every function body of the library names its objects as `onceboard.<name>`;
 * for another schema the text is rewritten once (and cached) before it is prepared. The library
 * never relies on the caller's search_path, so it can live in an application database beside the
 * application's own tables.
 */
export const DEFAULT_SCHEMA = "onceboard";

// Lower-case identifiers only: the name is then never quoted, a rewritten statement reads like the
// source, and no input can smuggle SQL through the schema option.
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const QUALIFIER = /\bonceboard\./g;

/** The schema option, validated: InvalidEffectsOptionsError naming `schema` when it is not usable. */
export function schemaNameOf(value: unknown, field = "schema"): string {
  if (value === undefined) return DEFAULT_SCHEMA;
  if (typeof value !== "string" || !SCHEMA_NAME.test(value) || value.startsWith("pg_")) {
    throw new InvalidEffectsOptionsError(
      `${field} must be a lower-case PostgreSQL identifier (letters, digits, _; at most 63; not pg_*); got ${JSON.stringify(value)}`,
      { field },
    );
  }
  return value;
}

const rewritten = new Map<string, Map<string, string>>();

/** `text` with every `onceboard.` qualifier pointing at `schema` instead. */
export function inSchema(text: string, schema: string): string {
  if (schema === DEFAULT_SCHEMA) return text;
  let bySchema = rewritten.get(schema);
  if (!bySchema) {
    bySchema = new Map();
    rewritten.set(schema, bySchema);
  }
  let out = bySchema.get(text);
  if (out === undefined) {
    out = text.replace(QUALIFIER, `${schema}.`);
    bySchema.set(text, out);
  }
  return out;
}

/** A prepared statement's name for a schema: the same text under two schemas is two statements. */
export function statementNameIn(name: string, schema: string): string {
  return schema === DEFAULT_SCHEMA ? name : `${name}@${schema}`;
}

type QueryFn = (...args: never[]) => unknown;

/**
 * `client` with its query() rewriting `onceboard.` to `schema` in the text (a string or a
 * `{ text }` config): for the manager's DDL and catalog reads, which are built as strings.
 */
export function queryingIn<C extends { query: QueryFn }>(client: C, schema: string): C {
  if (schema === DEFAULT_SCHEMA) return client;
  const query = (first: unknown, ...rest: unknown[]) => {
    const rewrittenFirst =
      typeof first === "string"
        ? inSchema(first, schema)
        : first && typeof first === "object" && typeof (first as { text?: unknown }).text === "string"
          ? { ...(first as object), text: inSchema((first as { text: string }).text, schema) }
          : first;
    return (client.query as (...args: unknown[]) => unknown).call(client, rewrittenFirst, ...rest);
  };
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === "query") return query;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
