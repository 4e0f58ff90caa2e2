import { Keyset } from "../../console/keyset";

/**
 * The admin lists' sort keys (GET /api/v1/tokens and /api/v1/sessions, the Tokens & sessions
 * page): here, beside the other lists' read models, so that the page's URL parser
 * (lib/routes/page-queries.ts) refuses another list's cursor before anything is read.
 */

/**
 * Tokens, newest made first, by seq (a bigint identity: insertion order). Not created_at then id:
 * Prisma reads a time to the millisecond, PostgreSQL keeps microseconds, so a cursor holding a
 * time could not name a row exactly; seq alone is unique and exact.
 */
export const TOKEN_KEYSET = new Keyset("tokens", [{ column: "seq", type: "bigint" }]);

/**
 * Live sessions, newest signed in first, by seq (a bigint identity: insertion order). Not by last
 * seen: it moves while a list is paged, and a row that moves past the cursor is skipped or read
 * twice; nor by created_at then id, for the token's reason.
 */
export const SESSION_KEYSET = new Keyset("sessions", [{ column: "seq", type: "bigint" }]);
