import { isIP } from "node:net";
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

/**
 * Where the console reads the worker library's effects store when it is not the console's own
 * PostgreSQL: a MySQL 8 or MariaDB server. PostgreSQL is not accepted here: unset, the store is
 * DATABASE_URL's database, where the console's own tables are (the reconciler and the alerts join
 * the two there).
 */
const mysqlUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "mysql:" || url.protocol === "mariadb:") && url.hostname !== "";
    } catch {
      return false;
    }
  }, "must be a URL like mysql://user:password@host:3306/onceboard (a MySQL 8 or MariaDB server); leave it unset to read the effects from the console's PostgreSQL (DATABASE_URL)")
  .refine((value) => {
    try {
      return /^\/?([A-Za-z0-9_$]{1,64})?$/.test(new URL(value).pathname);
    } catch {
      return true;
    }
  }, "names a database that is not a plain MySQL identifier (letters, digits, _ or $): the path is the database holding the library's tables");

/** An http(s) URL: the config's URLs and the providers file's endpoints are checked alike. */
export const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}, "must be an http(s) URL");

const emptyAsUndefined = (value: unknown) => (value === "" ? undefined : value);

/**
 * A comma-separated list of field-name words for redaction ("api_key, cardNumber"). Each entry is
 * letters, digits, "_", "-", "." or spaces: a typo like "pass*" is refused with the variable's name.
 */
const redactWordList = z.preprocess(
  emptyAsUndefined,
  z
    .string()
    .transform((value) =>
      value
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ""),
    )
    .pipe(
      z.array(
        z
          .string()
          .max(100)
          .regex(/^[A-Za-z0-9_.\- ]+$/, "field-name words are letters, digits, _ - . or spaces"),
      ),
    )
    .optional(),
);

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

/** "10.0.0.1, 10.1.0.0/16, ::1" → the entries, each an IPv4/IPv6 address or CIDR; a bad entry is named. */
const addressList = z.string().transform((value, ctx) => {
  const entries = value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  for (const entry of entries) {
    const [address = "", prefix, extra] = entry.split("/");
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra !== undefined)
      ctx.addIssue(`has an entry that is not an IP address or CIDR: "${entry}"`);
  }
  return entries;
});

const logLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]);

const configSchema = z.object({
  DATABASE_URL: z.preprocess(emptyAsUndefined, postgresUrl.optional()),
  /**
   * The console's own login, a role that must not own the audit log (README: Using an existing
   * PostgreSQL); DATABASE_URL's role then only migrates. Unset: the console uses DATABASE_URL (and
   * `npm start` warns). The embedded default makes its console role itself.
   */
  CONSOLE_DATABASE_URL: z.preprocess(emptyAsUndefined, postgresUrl.optional()),
  /**
   * The worker library's effects store the console reads (keys, violations, overview, gaps,
   * retention) when it is a MySQL or MariaDB server: its database (the URL's path, else
   * ONCEBOARD_SCHEMA) holds the library's tables. Unset: the console's PostgreSQL holds them. The
   * console's own tables (tokens, sessions, audit, settings, reconciliation) stay in PostgreSQL.
   */
  EFFECTS_DATABASE_URL: z.preprocess(emptyAsUndefined, mysqlUrl.optional()),
  PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(65535).default(3000)),
  /** The console's listen address: loopback unless told otherwise. */
  HOST: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^[\w.:-]+$/, "must be a host name or an IP address, e.g. 0.0.0.0 to listen on every interface")
      .default("127.0.0.1"),
  ),
  ONCEBOARD_DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default(".onceboard")),
  /** Set by whatever spawns the console (npm start, the e2e runner, bench:lookup): the console exits when that process is gone. */
  ONCEBOARD_PARENT_PID: z.preprocess(emptyAsUndefined, z.coerce.number().int().positive().optional()),
  /** The PostgreSQL schema holding the worker library's tables and the console's (default onceboard). */
  ONCEBOARD_SCHEMA: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, "a lower-case PostgreSQL identifier (letters, digits, _)")
      .refine((s) => !s.startsWith("pg_"), "must not start with pg_")
      .default("onceboard"),
  ),
  /** Redis for BullMQ: `npm start -- --broker bullmq`, `npm run soak -- --broker bullmq` (the adapter's tests read it too). */
  REDIS_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^rediss?:\/\/./, "must be a URL like redis://127.0.0.1:6379")
      .default("redis://127.0.0.1:6379"),
  ),
  /** RabbitMQ for `npm run soak -- --broker rabbitmq` and `bench:e2e` (the adapter's tests read it too). */
  RABBITMQ_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^amqps?:\/\/./, "must be a URL like amqp://guest:guest@127.0.0.1:5672")
      .default("amqp://guest:guest@127.0.0.1:5672"),
  ),
  /** NATS with JetStream for `npm run soak -- --broker nats` and `bench:e2e` (the adapter's tests read it too). */
  NATS_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^(nats|tls):\/\/./, "must be a URL like nats://127.0.0.1:4222")
      .default("nats://127.0.0.1:4222"),
  ),
  /**
   * MariaDB / MySQL for the demo and the soak on the library's MySQL store (`npm start -- --store
   * mariadb`, `npm run soak -- --store mariadb`; the MariaDB tests read it too). The path names the
   * demo's database (default onceboard_demo); the soak makes a scratch database of its own there.
   */
  MARIADB_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^(mysql|mariadb):\/\/./, "must be a URL like mysql://root@127.0.0.1:3306")
      .default("mysql://root@127.0.0.1:3306"),
  ),
  /**
   * Comma-separated /metrics URLs of worker processes, scraped by the console's Workers panel. Kept
   * raw here and checked by loadWorkerMetricsUrls: a bad entry is the Workers panel's error, not a
   * reason for the console's database (or anything else that reads the config) to fail.
   */
  WORKER_METRICS_URLS: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** Prometheus server the Overview's charts and alert states come from (default: the PostgreSQL rollups). */
  PROMETHEUS_URL: z.preprocess(emptyAsUndefined, httpUrl.optional()),
  CONSOLE_STATEMENT_TIMEOUT_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(100).max(600_000).default(5000)),
  LOG_LEVEL: z.preprocess(emptyAsUndefined, logLevel.default("info")),
  /** The demo workers' log level (their logs go to ONCEBOARD_DATA_DIR/logs). */
  DEMO_LOG_LEVEL: z.preprocess(emptyAsUndefined, logLevel.default("warn")),
  /** The browser the Playwright tests drive (scripts/e2e.ts). */
  CHROMIUM_PATH: z.preprocess(emptyAsUndefined, z.string().default("/usr/bin/chromium")),
  /** `true` (or 1, yes): tests whose tool is missing (browser, Redis, promtool) fail instead of skipping. */
  CI: z.preprocess(emptyAsUndefined, z.string().optional()).transform((value) => /^(1|true|yes)$/i.test(value ?? "")),
  /** scripts/e2e.ts: where to write Playwright's JSON report (CI sums it). */
  ONCEBOARD_E2E_RESULTS: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** scripts/e2e.ts: set to rebuild the console even when the build looks current. */
  ONCEBOARD_E2E_REBUILD: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** The soak's worker processes' log level (lib/soak). */
  SOAK_LOG_LEVEL: z.preprocess(emptyAsUndefined, logLevel.default("silent")),
  /** Extra node flags for the soak's worker processes, space-separated (e.g. --cpu-prof). */
  SOAK_WORKER_NODE_ARGS: z.preprocess(emptyAsUndefined, z.string().default("")),
  /** Set (to anything): command-line failures also print the stack. */
  ONCEBOARD_DEBUG: z.preprocess(emptyAsUndefined, z.string().optional()).transform((value) => value !== undefined),
  /** Signs console session cookies; unset: a random one is generated once and kept in <ONCEBOARD_DATA_DIR>/session-secret (0600). */
  ONCEBOARD_SECRET: z.preprocess(emptyAsUndefined, z.string().min(32, "must be at least 32 characters").optional()),
  /** API requests per minute per token (a token bucket of this size, refilled evenly). */
  ONCEBOARD_RATE_LIMIT_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(1_000_000).default(600)),
  /**
   * At most this many authenticated requests a console process counts in PostgreSQL with one upsert
   * and then allows without asking (lib/auth/rate-limit.ts); 1 counts every request as it comes.
   */
  ONCEBOARD_RATE_LIMIT_SHARE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(1000).default(64)),
  /**
   * Milliseconds a console process may answer who a token or session is from memory
   * (lib/auth/auth-cache.ts; a revocation empties it at once); 0 reads them on every request.
   */
  ONCEBOARD_AUTH_CACHE_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(60_000).default(5000)),
  /**
   * `on`: the console's own server answers the key lookup and the fragment search itself, without
   * Next.js's router (lib/routes/direct-api.ts), with the same guard, handler and headers; `off`:
   * Next.js routes them like every other request.
   */
  ONCEBOARD_DIRECT_API: z.preprocess(emptyAsUndefined, z.enum(["on", "off"]).default("on")),
  /** Sign-in attempts, and requests with an unknown or invalid credential, per minute per client address. */
  ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(1_000_000).default(30),
  ),
  /** Authenticated requests per minute per client address (every token it uses together). */
  ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: z.preprocess(
    emptyAsUndefined,
    z.coerce.number().int().min(1).max(1_000_000).default(1200),
  ),
  /** Minutes a console session may go unused before it ends. */
  ONCEBOARD_SESSION_IDLE_MINUTES: z.preprocess(
    emptyAsUndefined,
    z.coerce
      .number()
      .int()
      .min(1)
      .max(60 * 24 * 30)
      .default(60),
  ),
  /** The console's public origin (e.g. https://onceboard.example.com): what CSRF compares Origin with, and https there turns on HSTS. */
  PUBLIC_URL: z.preprocess(emptyAsUndefined, httpUrl.optional()),
  /** Comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For/-Host/-Proto and X-Real-IP are believed (none by default). */
  TRUSTED_PROXIES: z.preprocess(emptyAsUndefined, addressList.default([])),
  /** Strict-Transport-Security max-age (seconds) sent when the console is served over https; 0 sends none. */
  ONCEBOARD_HSTS_MAX_AGE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(63_072_000).default(31_536_000)),
  /** How long a console session lasts at most (hours; never past its token's expiry). */
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
  /** Extra comma-separated field-name words whose values are always redacted (e.g. "dob,passport"), added to the list. */
  ONCEBOARD_REDACT_FIELDS: redactWordList,
  /** Replaces the default field-name words (lib/console/redact.ts DEFAULT_REDACTED_FIELD_WORDS). */
  ONCEBOARD_REDACT_FIELD_WORDS: redactWordList,
  /** `true` (or 1, yes): the console writes nothing — every state-changing API request is refused (403) and the pages hide their write buttons. */
  CONSOLE_READ_ONLY: z
    .preprocess(emptyAsUndefined, z.string().optional())
    .transform((value) => /^(1|true|yes)$/i.test(value ?? "")),
  /** The most rows one bulk action may touch ("release every stuck claim …", "acknowledge every open finding matching this filter"); a filter matching more is refused. */
  BULK_ACTION_MAX_ITEMS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(1_000_000).default(10_000)),
  /** Single sign-on: the identity provider's issuer URL (discovery at <issuer>/.well-known/openid-configuration). Needs OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and PUBLIC_URL. */
  OIDC_ISSUER: z.preprocess(emptyAsUndefined, httpUrl.optional()),
  /** The console's client id at the identity provider. */
  OIDC_CLIENT_ID: z.preprocess(emptyAsUndefined, z.string().max(500).optional()),
  /** The console's client secret at the identity provider (client_secret_basic). */
  OIDC_CLIENT_SECRET: z.preprocess(emptyAsUndefined, z.string().max(2000).optional()),
  /** The identity provider's name on the sign-in button ("Sign in with …"); unset: the issuer's host. */
  OIDC_NAME: z.preprocess(emptyAsUndefined, z.string().max(100).optional()),
  /** Scopes the console asks for, space-separated; must include openid. */
  OIDC_SCOPES: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/(^|\s)openid(\s|$)/, "must include openid")
      .default("openid profile email"),
  ),
  /** The ID token claim that lists a person's groups (a list of strings, or one string). */
  OIDC_GROUPS_CLAIM: z.preprocess(emptyAsUndefined, z.string().max(200).default("groups")),
  /** A JSON file mapping group names to a role and a tenant or the platform (lib/auth/oidc-roles.ts); unset: the onceboard-platform-<role> / onceboard-tenant-<tenant>-<role> names. */
  OIDC_ROLE_MAPPING_FILE: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** Seconds between the console's partition maintenance runs (lib/features/retention-and-gaps/schedule.ts); 0 turns it off. */
  /** Stripe's secret key for reconciliation (read-only is enough: it lists PaymentIntents and Refunds). */
  STRIPE_API_KEY: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  /** Where the stripe client sends requests: Stripe itself by default, or a Stripe-compatible local server (the demo's). */
  STRIPE_HOST: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  STRIPE_PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(65_535).optional()),
  STRIPE_PROTOCOL: z.preprocess(emptyAsUndefined, z.enum(["http", "https"]).optional()),
  /** The JSON file saying which providers to reconcile with and which job types and steps each holds (lib/reconciliation/providers.ts); unset: none. */
  ONCEBOARD_PROVIDERS_FILE: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** Seconds a provider may lag its own writes: objects and effects younger than this are "pending", not findings. */
  RECONCILE_GRACE_SECONDS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(604_800).default(900)),
  /** Seconds between the console's reconciliation passes (rolling hour and uncovered whole days); 0 turns the loop off. */
  RECONCILE_INTERVAL_SECONDS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(86_400).default(300)),
  RETENTION_MAINTENANCE_INTERVAL_SECONDS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(86_400).default(300)),
});

/** Single sign-on is all or nothing: the three OIDC_* variables together, and a PUBLIC_URL for the redirect URI the provider has registered. */
const checkedConfigSchema = configSchema.superRefine((config, ctx) => {
  const oidc = {
    OIDC_ISSUER: config.OIDC_ISSUER,
    OIDC_CLIENT_ID: config.OIDC_CLIENT_ID,
    OIDC_CLIENT_SECRET: config.OIDC_CLIENT_SECRET,
  };
  const set = Object.entries(oidc).filter(([, value]) => value !== undefined);
  if (set.length === 0) return;
  for (const [name, value] of Object.entries(oidc)) {
    if (value === undefined)
      ctx.addIssue({ code: "custom", path: [name], message: `must be set with ${set.map(([n]) => n).join(", ")}` });
  }
  if (config.PUBLIC_URL === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["PUBLIC_URL"],
      message: "must be set for single sign-on (OIDC_*): the redirect URI is made from it",
    });
  }
});

export type Config = z.infer<typeof configSchema>;

/** An environment to read: process.env, or a test's own. */
type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  readonly code = "CONFIG_INVALID";
}

/** The variables the schema reads: the only part of an environment a parse depends on. */
const CONFIG_KEYS = Object.keys(configSchema.shape);

/** The variables' values in one string (unset and empty told apart): equal strings parse alike. */
function fingerprintOf(env: Env): string {
  let fingerprint = "";
  for (const key of CONFIG_KEYS) {
    const value = env[key];
    fingerprint += value === undefined ? "\u0001" : `\u0002${value}`;
  }
  return fingerprint;
}

/**
 * The last good parse per environment object. The console reads its configuration several times a
 * request (the proxy's guard, the route, the audit), and validating the whole environment took a
 * sixth of a request's CPU (bench:lookup, docs/benchmarks.md); reading the values back to compare
 * costs ~18 µs. The values are compared on every call, so a changed variable (a test's) is parsed
 * again; the answer and its lists are frozen, so no caller can change what the next one reads.
 */
const lastParse = new WeakMap<object, { fingerprint: string; config: Config }>();

/** Parses the environment; a bad value throws one ConfigError naming every offending variable. */
export function loadConfig(env: Env = process.env): Config {
  const known = lastParse.get(env);
  // A production server's own environment is fixed once it starts (nothing in the console writes
  // process.env; the CLI sets PORT and HOST before its first read), and the comparison ran about
  // twenty times a request: 0.4 ms of a key lookup's CPU. Its first parse stands.
  if (known && env === process.env && process.env.NODE_ENV === "production") return known.config;
  const fingerprint = fingerprintOf(env);
  if (known?.fingerprint === fingerprint) return known.config;
  const parsed = checkedConfigSchema.safeParse(env);
  if (parsed.success) {
    for (const value of Object.values(parsed.data)) if (Array.isArray(value)) Object.freeze(value);
    const config = Object.freeze(parsed.data);
    lastParse.set(env, { fingerprint, config });
    return config;
  }
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`);
  throw new ConfigError(`invalid configuration: ${problems.join("; ")}`);
}

/** WORKER_METRICS_URLS as a list of http(s) URLs (empty when unset); a malformed entry throws a ConfigError naming it. */
export function loadWorkerMetricsUrls(env: Env = process.env): string[] {
  const raw = loadConfig(env).WORKER_METRICS_URLS;
  if (raw === undefined) return [];
  const parsed = httpUrlList.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    `invalid configuration: ${parsed.error.issues.map((issue) => `WORKER_METRICS_URLS ${issue.message}`).join("; ")}`,
  );
}

/**
 * Whether the console asks for credentials: true, the proxy and withAuth refuse every
 * unauthenticated page and API route. Were it false, `npm start` would warn when HOST exposes the
 * console beyond loopback.
 */
export const CONSOLE_AUTHENTICATION_ENABLED: boolean = true;

/** Whether a listen address is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** ONCEBOARD_DEBUG alone: read while reporting a failure, so it must not fail on another variable. */
export function loadDebugFlag(env: Env = process.env): boolean {
  const parsed = configSchema.pick({ ONCEBOARD_DEBUG: true }).safeParse(env);
  return parsed.success && parsed.data.ONCEBOARD_DEBUG;
}
