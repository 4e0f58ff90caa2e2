import { parseArgs } from "node:util";
import pg from "pg";
import { ROLES, type Role } from "../lib/auth/auth-types";
import { createLoginLink, loginLinkUrl } from "../lib/auth/login";
import { createToken, listTokens, parseExpiry, revokeToken } from "../lib/auth/tokens";
import { loadConfig } from "../lib/config";
import { createPrismaClient } from "../lib/db/prisma";
import { openDatabase } from "../lib/db/provision";
import { runMain } from "./cli";
import { runningConsoleUrl } from "./run-registry";

const USAGE = `usage:
  npm run token -- create (--tenant <id> | --platform) --role viewer|operator|admin [--name <text>] [--expires 30d|12h|90m]
  npm run token -- list
  npm run token -- revoke <id>
  npm run token -- link <id>       a one-time console login link for that token (24 h)`;

/** `npm run token`: API tokens for the console and /api/v1, on DATABASE_URL, else the embedded database of `npm start` (openDatabase). */
runMain(async () => {
  const [command, ...rest] = process.argv.slice(2);
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      tenant: { type: "string" },
      platform: { type: "boolean", default: false },
      role: { type: "string" },
      name: { type: "string" },
      expires: { type: "string" },
      json: { type: "boolean", default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (!command || !["create", "list", "revoke", "link"].includes(command)) throw new Error(USAGE);
  // Arguments are checked before a database is opened (which may start the embedded server).
  if (command === "create") {
    if (!values.role || !ROLES.includes(values.role as Role))
      throw new Error(`--role must be one of ${ROLES.join(", ")}\n${USAGE}`);
    if (values.platform === (values.tenant !== undefined))
      throw new Error(`give exactly one of --tenant <id> and --platform\n${USAGE}`);
  }
  const expiresAt = command === "create" && values.expires ? parseExpiry(values.expires) : null;
  if ((command === "revoke" || command === "link") && !positionals[0]) {
    throw new Error(`${command} needs a token id (npm run token -- list shows them)\n${USAGE}`);
  }
  const db = await openDatabase();
  const pool = new pg.Pool({ connectionString: db.url, max: 1, application_name: "onceboard-token-cli" });
  pool.on("error", () => {});
  const prisma = createPrismaClient(pool);
  try {
    switch (command) {
      case "create": {
        const tenantId = values.platform ? null : (values.tenant ?? null);
        const name = values.name ?? `${values.role} ${tenantId ?? "platform"}`;
        const { token, secret } = await createToken({ name, tenantId, role: values.role as Role, expiresAt }, prisma);
        process.stdout.write(
          `created token ${token.id}: ${token.role} for ${tenantId === null ? "the platform (all tenants)" : `tenant ${tenantId}`}` +
            `${expiresAt ? `, expires ${expiresAt.toISOString()}` : ""}\n` +
            "the token is shown once; only its hash is stored:\n",
        );
        process.stdout.write(`${secret}\n`);
        return;
      }
      case "list": {
        const tokens = await listTokens(prisma);
        if (values.json) {
          process.stdout.write(`${JSON.stringify(tokens)}\n`);
          return;
        }
        if (tokens.length === 0) process.stdout.write("no tokens\n");
        for (const t of tokens) {
          const state = t.revokedAt ? "revoked" : t.expiresAt && t.expiresAt <= new Date() ? "expired" : "active";
          process.stdout.write(
            [t.id, `…${t.suffix}`, t.role.padEnd(8), (t.tenantId ?? "(platform)").padEnd(12), state.padEnd(7), t.name].join(
              "  ",
            ) +
              `${t.expiresAt ? `  expires ${t.expiresAt.toISOString()}` : ""}${t.lastUsedAt ? `  last used ${t.lastUsedAt.toISOString()}` : ""}\n`,
          );
        }
        return;
      }
      case "revoke": {
        const id = positionals[0] ?? "";
        if (!(await revokeToken(id, prisma))) throw new Error(`no token with id ${id}`);
        process.stdout.write(`revoked ${id}\n`);
        return;
      }
      case "link": {
        const id = positionals[0] ?? "";
        const { code, expiresAt } = await createLoginLink(id, { db: prisma }).catch(() => {
          throw new Error(`no token with id ${id}`);
        });
        // The running npm start's own address (it may listen on another PORT than this shell's).
        const config = loadConfig();
        const base = runningConsoleUrl(config.ONCEBOARD_DATA_DIR) ?? `http://localhost:${config.PORT}`;
        process.stdout.write(
          `one-time login link (valid until ${expiresAt.toISOString()}, works once):\n${loginLinkUrl(base, code)}\n`,
        );
        return;
      }
      default:
        throw new Error(USAGE);
    }
  } finally {
    await prisma.$disconnect();
    await pool.end();
    await db.stop();
  }
});
