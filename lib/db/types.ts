import type { QueryResult, QueryResultRow } from "pg";

/** Anything with pg's query signature: a Pool, a PoolClient or a Client. */
export interface Queryable {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/**
 * A named statement: node-postgres prepares it once per connection and PostgreSQL keeps its plan,
 * so a query over every partition of effects is not planned again on each request.
 */
interface NamedStatement {
  name: string;
  text: string;
  values?: unknown[];
}

/** A Queryable that also runs named statements (a pg Pool, PoolClient or Client does). */
export interface StatementQueryable extends Queryable {
  query<R extends QueryResultRow = QueryResultRow>(
    statement: string | NamedStatement,
    values?: unknown[],
  ): Promise<QueryResult<R>>;
}
