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
  /** Prometheus server the Overview's charts and alert states come from (default: the PostgreSQL rollups). */
  PROMETHEUS_URL: z.preprocess(emptyAsUndefined, httpUrl.optional()),
  CONSOLE_STATEMENT_TIMEOUT_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(100).max(600_000).default(5000)),
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
