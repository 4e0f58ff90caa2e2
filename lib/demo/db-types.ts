import type { QueryResult, QueryResultRow } from "pg";

/** Anything with pg's query signature: a Pool, a PoolClient or a Client (the demo's own, so it needs nothing of lib/db). */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}
