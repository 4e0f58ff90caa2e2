import pg from "pg";
import type { PrismaClient } from "../db/generated/client";
import { createPrismaClient, getPrisma } from "../db/prisma";
import { createLoginLink, loginLinkUrl } from "./login";
import { createToken, hashSecret } from "./tokens";

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

/** What `npm start` printed to sign in: the line, and the one-time link in it when it made one. */
interface BootstrapLogin {
  message: string;
  link: { tokenId: string; code: string; expiresAt: Date } | null;
}

const SIGN_IN_WITH_A_TOKEN = "sign in with a token (npm run token -- create --platform --role admin makes one)";

/** A short-lived Prisma client of its own on `databaseUrl`, for npm start's few bootstrap queries. */
async function withBootstrapClient<T>(databaseUrl: string, use: (prisma: PrismaClient) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, application_name: "onceboard-bootstrap" });
  // npm start can be stopped (and its database with it) while this runs: the query in flight fails
  // and its caller hears of it. Without these listeners the connection's 'error' event (on the pool
  // for an idle client, on the client itself while Prisma holds it for a transaction) would end the
  // process with exit code 1.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  const prisma = createPrismaClient(pool);
  try {
    return await use(prisma);
  } finally {
    await prisma.$disconnect().catch(() => {});
    await pool.end().catch(() => {});
  }
}

/**
 * For `npm start`: on a database without tokens, the line to print (a one-time login link);
 * otherwise a reminder of how to get in. Uses its own short-lived connection to `databaseUrl`.
 */
export async function bootstrapLogin(databaseUrl: string, baseUrl: string): Promise<BootstrapLogin> {
  return withBootstrapClient(databaseUrl, async (prisma) => {
    const made = await ensureBootstrapAdmin(baseUrl, prisma);
    if (!made) return { message: SIGN_IN_WITH_A_TOKEN, link: null };
    const code = new URL(made.url).hash.replace(/^#code=/, "");
    return {
      message: `first start: created a platform admin token (id ${made.tokenId}). Sign in once with this link (valid until ${made.expiresAt.toISOString()}): ${made.url}`,
      link: { tokenId: made.tokenId, code, expiresAt: made.expiresAt },
    };
  });
}

/**
 * The sign-in line printed again later (after the history backfill has scrolled the first away):
 * the same link while it is unused and valid; once it has been used or has expired, not that dead
 * link again but how to get a new one — a link is a credential, so none is minted unasked.
 */
export async function bootstrapLoginReminder(databaseUrl: string, first: BootstrapLogin, now = new Date()): Promise<string> {
  const link = first.link;
  if (link === null) return first.message;
  const row = await withBootstrapClient(databaseUrl, (prisma) =>
    prisma.loginLink.findUnique({ where: { codeHash: hashSecret(link.code) }, select: { usedAt: true, expiresAt: true } }),
  );
  if (row && row.usedAt === null && row.expiresAt.getTime() > now.getTime()) return first.message;
  const why = row?.usedAt ? `was used at ${row.usedAt.toISOString()}` : "has expired";
  return `the sign-in link printed above ${why}: npm run token -- link ${link.tokenId} makes a new one-time link for the same admin token (npm run token -- create --platform --role admin, a new token)`;
}
