import { z } from "zod";

/** Every environment variable Onceboard reads, validated in one place (documented in README.md). */
const postgresUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === "postgresql:" || url.protocol === "postgres:") && url.hostname !== "";
  } catch {
    return false;
  }
}, "must be a URL like postgresql://user@host:5432/database");

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}, "must be an http(s) URL");

const emptyAsUndefined = (value: unknown) => (value === "" ? undefined : value);

/** "a, b,,c" → ["a", "b", "c"]: comma-separated http(s) URLs, blanks and repeats dropped; a bad entry is named. */
const httpUrlList = z.string().transform((value, ctx) => {
  const entries = [...new Set(value.split(",").map((entry) => entry.trim()))].filter((entry) => entry !== "");
  for (const entry of entries) {
    // Named so it can be found, with anything before an "@" masked: it may be a user and password.
    const shown = entry.replace(/^([^/@]*\/\/)?[^@]*@/, "$1***@");
    if (!httpUrl.safeParse(entry).success) ctx.addIssue(`has an entry that is not an http(s) URL: "${shown}"`);
  }
  return entries;
});

const configSchema = z.object({
  DATABASE_URL: z.preprocess(emptyAsUndefined, postgresUrl.optional()),
  PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(65535).default(3000)),
  ONCEBOARD_DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default(".onceboard")),
  REDIS_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^rediss?:\/\/./, "must be a URL like redis://127.0.0.1:6379")
      .optional(),
  ),
  /** Comma-separated /metrics URLs of worker processes, scraped by the console's Workers panel. */
  WORKER_METRICS_URLS: z.preprocess(emptyAsUndefined, httpUrlList.optional()),
  CONSOLE_STATEMENT_TIMEOUT_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(100).max(600_000).default(5000)),
  /** Signs console session cookies; unset: a random one is generated once and kept in <ONCEBOARD_DATA_DIR>/session-secret (0600). */
  ONCEBOARD_SECRET: z.preprocess(emptyAsUndefined, z.string().min(32, "must be at least 32 characters").optional()),
  /** API requests per minute per token (a token bucket of this size, refilled evenly). */
  ONCEBOARD_RATE_LIMIT_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(1_000_000).default(600)),
  /** How long a console session lasts (hours; never past its token's expiry). */
  ONCEBOARD_SESSION_HOURS: z.preprocess(
    emptyAsUndefined,
    z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 30)
      .default(12),
  ),
  /** Outcome redaction before it leaves the server: default (card numbers, e-mail addresses) or off. */
  ONCEBOARD_REDACT: z.preprocess(emptyAsUndefined, z.enum(["default", "off"]).default("default")),
  /** Extra comma-separated outcome field names whose values are always redacted (e.g. "iban,phone"). */
  ONCEBOARD_REDACT_FIELDS: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .transform((value) =>
        value
          .split(",")
          .map((entry) => entry.trim())
          .filter((entry) => entry !== ""),
      )
      .optional(),
  ),
  LOG_LEVEL: z.preprocess(
    emptyAsUndefined,
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  readonly code = "CONFIG_INVALID";
}

/** Parses the environment; a bad value throws one ConfigError naming every offending variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`);
  throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
}
