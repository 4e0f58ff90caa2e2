import fs from "node:fs";
import { z } from "zod";
import { type Config, ConfigError, httpUrl } from "../config";
import type { HttpJsonMapping } from "./http-json";

/**
 * The providers Onceboard reconciles with, and which job types' effects each one holds: read from
 * the JSON file ONCEBOARD_PROVIDERS_FILE names (docs/reconciliation.md, "Configuring providers"),
 * never written into the code, so a user's own job types reconcile like the demo's. A job type's
 * external step must put `onceboardMetadata(claim)` into the provider's object and return
 * `providerOutcome(object)`; then its effects and the provider's objects join on the key.
 */
export interface ReconcileProvider {
  /** The name runs and findings carry ("stripe", "mailer"). */
  name: string;
  /** What the console calls it ("Stripe"). */
  label: string;
  /** The provider's objects in words, for findings ("PaymentIntent", "message"). */
  objectNoun: string;
  /** Job types whose effects this provider holds. */
  jobTypes: string[];
  /** Within those job types, the steps (key prefixes, "settle:") that call this provider: a multi-step job calls several. */
  keyPrefixes: string[];
  /** What a person calls one step's object, by key prefix ("a refund"), where it is not objectNoun. */
  stepNouns: Record<string, string>;
  /**
   * How long the provider itself dedupes a repeated idempotency key (Stripe: 24 h), or null when
   * it does not dedupe at all. A redelivery later than this was stopped by Onceboard's record alone.
   */
  keyWindowSeconds: number | null;
  /** Whether every object of these job types must carry an Onceboard key (an object with none is a path that charged without a claim). */
  keyRequired: boolean;
  /** Compare amount/currency/status with the outcome (drift). */
  compareFields: Array<"amount" | "currency" | "status">;
  /** The provider's own page for one of its objects, `{id}` standing for the object's id; null when not configured. */
  objectUrl: string | null;
  /** How its objects are listed. */
  adapter: ProviderAdapterSettings;
  /** Whether it can be read here (its credentials are set). */
  configured: boolean;
  /** When not configured, what is missing, as a sentence naming the variable to set. */
  notConfiguredReason: string | null;
}

type ProviderAdapterSettings =
  | { type: "stripe" }
  | { type: "http-json"; url: string; mapping: HttpJsonMapping; bearerTokenEnv: string | null };

/** The variable naming the providers file. */
export const PROVIDERS_FILE_VARIABLE = "ONCEBOARD_PROVIDERS_FILE";

// Keys are `<step>:<business fact>` (lib/idempotency validateKey): a prefix must name a step, so a
// typo like "settle" (no colon) is refused instead of matching nothing, or everything.
const KEY_PREFIX = /^[A-Za-z0-9_.-]+:/;
const NAME = /^[a-z][a-z0-9_-]{0,39}$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

const fieldPath = z.string().min(1, "must be a dotted path into an item, e.g. meta.key");

/** What stands for the object's id in an objectUrl pattern. */
const OBJECT_ID = "{id}";

/**
 * The parts of an objectUrl pattern an object id must never reach: the scheme, the host, a user or
 * password (the id is URL-encoded into the path, query or fragment only, so a provider's id cannot
 * send a console user to another site), and no credentials, since every console user sees the link.
 */
function objectUrlProblem(pattern: string): string | null {
  if (!pattern.includes(OBJECT_ID)) return `must contain ${OBJECT_ID}, where the object's id goes`;
  let url: URL;
  try {
    // A marker in place of {id}: braces in a host name would not parse, and the question is where it lands.
    url = new URL(pattern.replaceAll(OBJECT_ID, "onceboard-object-id"));
  } catch {
    return null; // httpUrl names it
  }
  if (url.username !== "" || url.password !== "") return "must not carry a user or password: every console user sees the link";
  if (url.host.includes("onceboard-object-id")) return `must put ${OBJECT_ID} in the path, query or fragment, not in the host`;
  return null;
}

const objectUrlSchema = httpUrl.superRefine((pattern, ctx) => {
  const problem = objectUrlProblem(pattern);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const mappingSchema = z.strictObject({
  items: fieldPath,
  next: fieldPath,
  id: fieldPath,
  key: fieldPath,
  tenant: fieldPath,
  created: fieldPath,
  amount: fieldPath.optional(),
  currency: fieldPath.optional(),
  status: fieldPath.optional(),
  params: z
    .strictObject({
      from: z.string().min(1).optional(),
      to: z.string().min(1).optional(),
      limit: z.string().min(1).optional(),
      cursor: z.string().min(1).optional(),
    })
    .optional(),
});

const stepSchema = z.strictObject({
  keyPrefix: z.string().regex(KEY_PREFIX, 'must start with a step name and ":", like "settle:"'),
  /** What a person calls this step's object ("refund"); objectNoun when absent. */
  noun: z.string().min(1).max(40).optional(),
});

const providerSchema = z.strictObject({
  name: z.string().regex(NAME, "must be lower case letters, digits, _ or -, starting with a letter (at most 40)"),
  label: z.string().min(1).max(60).optional(),
  objectNoun: z.string().min(1).max(40),
  jobTypes: z.array(z.string().min(1).max(255)).min(1, "must list at least one job type"),
  steps: z.array(stepSchema).min(1, 'must list at least one step, e.g. [{ "keyPrefix": "settle:" }]'),
  keyWindowHours: z.number().positive().max(8_760).nullable(),
  keyRequired: z.boolean().default(false),
  compareFields: z.array(z.enum(["amount", "currency", "status"])).default([]),
  objectUrl: objectUrlSchema.optional(),
  adapter: z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("stripe") }),
    z.strictObject({
      type: z.literal("http-json"),
      url: httpUrl,
      mapping: mappingSchema,
      bearerTokenEnv: z.string().regex(ENV_NAME, "must be an environment variable's name, like MAILER_TOKEN").optional(),
    }),
  ]),
});

const fileSchema = z.strictObject({ providers: z.array(providerSchema) }).superRefine((file, ctx) => {
  const names = new Map<string, number>();
  // (job type, prefix) → the provider that holds it: two would make a key's provider a guess.
  const held = new Map<string, string>();
  file.providers.forEach((provider, i) => {
    const first = names.get(provider.name);
    if (first !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["providers", i, "name"],
        message: `repeats providers.${first}.name "${provider.name}"`,
      });
    } else names.set(provider.name, i);
    for (const jobType of provider.jobTypes) {
      for (const step of provider.steps) {
        const other = held.get(`${jobType}\u0001${step.keyPrefix}`);
        if (other !== undefined && other !== provider.name) {
          ctx.addIssue({
            code: "custom",
            path: ["providers", i, "steps"],
            message: `"${step.keyPrefix}" of job type ${jobType} is already held by provider ${other}: one provider per step`,
          });
        }
        held.set(`${jobType}\u0001${step.keyPrefix}`, provider.name);
      }
    }
  });
});

type CredentialEnv = Pick<Config, "STRIPE_API_KEY"> & { env?: Readonly<Record<string, string | undefined>> };

/**
 * The providers a file's contents configure. Every mistake is its own line, naming where it is
 * (`providers.0.steps.1.keyPrefix must start with …`), in one ConfigError.
 */
export function parseProviders(raw: unknown, source: string, credentials: CredentialEnv): ReconcileProvider[] {
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "(file)"} ${issue.message}`);
    throw new ConfigError(
      `invalid configuration: ${PROVIDERS_FILE_VARIABLE} (${source}) has ${problems.length === 1 ? "a mistake" : `${problems.length} mistakes`}:\n${problems.join("\n")}`,
    );
  }
  const env = credentials.env ?? process.env;
  return parsed.data.providers.map((p): ReconcileProvider => {
    let notConfiguredReason: string | null = null;
    if (p.adapter.type === "stripe" && credentials.STRIPE_API_KEY === undefined)
      notConfiguredReason = `set STRIPE_API_KEY to read ${p.label ?? p.name}`;
    if (p.adapter.type === "http-json" && p.adapter.bearerTokenEnv && !env[p.adapter.bearerTokenEnv])
      notConfiguredReason = `set ${p.adapter.bearerTokenEnv} (its bearer token) to read ${p.label ?? p.name}`;
    return {
      name: p.name,
      label: p.label ?? p.name,
      objectNoun: p.objectNoun,
      jobTypes: p.jobTypes,
      keyPrefixes: p.steps.map((step) => step.keyPrefix),
      stepNouns: Object.fromEntries(p.steps.flatMap((step) => (step.noun ? [[step.keyPrefix, step.noun]] : []))),
      keyWindowSeconds: p.keyWindowHours === null ? null : Math.round(p.keyWindowHours * 3600),
      keyRequired: p.keyRequired,
      compareFields: p.compareFields,
      objectUrl: p.objectUrl ?? null,
      adapter:
        p.adapter.type === "stripe"
          ? { type: "stripe" }
          : {
              type: "http-json",
              url: p.adapter.url,
              mapping: p.adapter.mapping,
              bearerTokenEnv: p.adapter.bearerTokenEnv ?? null,
            },
      configured: notConfiguredReason === null,
      notConfiguredReason,
    };
  });
}

/** The file read and parsed; a file that is not JSON is one line naming it. */
export function loadProvidersFile(file: string, credentials: CredentialEnv): ReconcileProvider[] {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigError(
      `invalid configuration: ${PROVIDERS_FILE_VARIABLE} (${file}) cannot be read as JSON: ${(error as Error).message}`,
    );
  }
  return parseProviders(raw, file, credentials);
}

// Pages and routes ask for the providers on every request: the file is parsed again only when it
// changed (its path, size or modification time), so an edit is picked up without a restart.
let cached: { stamp: string; providers: ReconcileProvider[] } | null = null;

/**
 * The configured providers: none when ONCEBOARD_PROVIDERS_FILE is unset (nothing is reconciled,
 * and the Reconciliation page says so). `npm start` and `npm run reconcile` call it first, so a
 * bad file stops them with its mistakes listed.
 */
export function reconcileProviders(config: Pick<Config, "ONCEBOARD_PROVIDERS_FILE" | "STRIPE_API_KEY">): ReconcileProvider[] {
  const file = config.ONCEBOARD_PROVIDERS_FILE;
  if (file === undefined) return [];
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    throw new ConfigError(
      `invalid configuration: ${PROVIDERS_FILE_VARIABLE} (${file}) cannot be read: ${(error as Error).message}`,
    );
  }
  const stamp = JSON.stringify([file, stat.size, stat.mtimeMs, config.STRIPE_API_KEY !== undefined]);
  if (cached?.stamp !== stamp) cached = { stamp, providers: loadProvidersFile(file, config) };
  return cached.providers;
}

/**
 * The provider's own page for an object: its id URL-encoded into the provider's objectUrl; null
 * when the provider has none, or when the result is not an http(s) URL (the file's check makes
 * that impossible; a link is never given on trust).
 */
export function providerObjectUrl(provider: Pick<ReconcileProvider, "objectUrl">, objectId: string): string | null {
  if (provider.objectUrl === null || objectId === "") return null;
  const href = provider.objectUrl.replaceAll(OBJECT_ID, encodeURIComponent(objectId));
  return httpUrl.safeParse(href).success && objectUrlProblem(provider.objectUrl) === null ? href : null;
}

/** The provider whose objects a key's effects are (its job type is mapped to it, the key is one of its steps). */
export function providerOf(
  providers: ReconcileProvider[],
  effect: { jobType: string; key: string },
): ReconcileProvider | undefined {
  return providers.find(
    (p) => p.jobTypes.includes(effect.jobType) && p.keyPrefixes.some((prefix) => effect.key.startsWith(prefix)),
  );
}
