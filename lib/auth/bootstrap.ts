import pg from "pg";
import type { PrismaClient } from "../db/generated/client";
import { createPrismaClient, getPrisma } from "../db/prisma";
import { createLoginLink, loginLinkUrl } from "./login";
import { createToken } from "./tokens";

/**
 * `npm start` on a database without any token: creates one platform admin token ("bootstrap
 * admin") and returns a one-time login link for it (24 h). Serialised by an advisory lock, so two
 * starts racing on an empty database create one token, not two. Returns null when tokens exist.
 */
export async function ensureBootstrapAdmin(
  baseUrl: string,
  db: PrismaClient = getPrisma(),
): Promise<{ tokenId: string; url: string; expiresAt: Date } | null> {
  return db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtextextended('onceboard:bootstrap-admin', 0))`);
    if ((await tx.apiToken.count()) > 0) return null;
    const { token } = await createToken({ name: "bootstrap admin", tenantId: null, role: "admin" }, tx);
    const link = await createLoginLink(token.id, { db: tx });
    return { tokenId: token.id, url: loginLinkUrl(baseUrl, link.code), expiresAt: link.expiresAt };
  });
}

/**
 * For `npm start`: on a database without tokens, the line to print (a one-time login link);
 * otherwise a reminder of how to get in. Uses its own short-lived connection to `databaseUrl`.
 */
export async function bootstrapLoginMessage(databaseUrl: string, baseUrl: string): Promise<string> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, application_name: "onceboard-bootstrap" });
  // npm start can be stopped (and its database with it) while this runs: the query in flight fails
  // and its caller hears of it. Without these listeners the connection's 'error' event (on the pool
  // for an idle client, on the client itself while Prisma holds it for a transaction) would end the
  // process with exit code 1.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  const prisma = createPrismaClient(pool);
  try {
    const made = await ensureBootstrapAdmin(baseUrl, prisma);
    if (!made) return "sign in with a token (npm run token -- create --platform --role admin makes one)";
    return `first start: created a platform admin token (id ${made.tokenId}). Sign in once with this link (valid until ${made.expiresAt.toISOString()}): ${made.url}`;
  } finally {
    await prisma.$disconnect().catch(() => {});
    await pool.end().catch(() => {});
  }
}
