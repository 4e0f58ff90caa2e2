import { createHash } from "node:crypto";
import { InvalidEffectInputError, InvalidEffectKeyError } from "./errors";

/**
 * Tenant, key and job type are at most this many Unicode code points (what a person calls
 * characters: "é" and "😀" count one each), whatever their UTF-16 or UTF-8 length.
 */
export const MAX_KEY_LENGTH = 255;

/** Length in Unicode code points (a lone surrogate counts one). */
function codePointLength(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

// A UTF-16 surrogate without its partner: PostgreSQL stores it as U+FFFD, so two different keys
// would name one row.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// Control characters (C0, DEL, C1): invisible in logs, and chr(1) separates tenant from key in
// the claim's advisory-lock hash.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

// The step name is part of the key ("settle:invoice-123"), so two steps of one job, or two jobs
// touching one order, cannot share a key by accident.
const STEP_PREFIX = /^[A-Za-z0-9_.-]+:./s;

function checkText(what: "tenant" | "key" | "jobType", value: unknown): string {
  const E = what === "jobType" ? InvalidEffectInputError : InvalidEffectKeyError;
  const field = { field: what };
  const label = what === "jobType" ? "jobType" : `effect ${what}`;
  if (typeof value !== "string" || value.length === 0) throw new E(`${label} must be a non-empty string`, field);
  // UTF-16 length is at least the code point length: count code points only when it could matter.
  const length = value.length > MAX_KEY_LENGTH ? codePointLength(value) : value.length;
  if (length > MAX_KEY_LENGTH)
    throw new E(`${label} is ${length} characters (Unicode code points); at most ${MAX_KEY_LENGTH}`, field);
  if (CONTROL.test(value)) throw new E(`${label} contains a control character`, field);
  if (LONE_SURROGATE.test(value)) throw new E(`${label} contains a lone UTF-16 surrogate`, field);
  return value;
}

/** Throws InvalidEffectInputError (field jobType) unless 1..255 code points, no control characters. */
export function validateJobType(jobType: unknown): string {
  return checkText("jobType", jobType);
}

/** Throws InvalidEffectKeyError (field tenant) unless 1..255 code points, no control characters. */
export function validateTenant(tenant: unknown): string {
  return checkText("tenant", tenant);
}

/** Throws InvalidEffectKeyError unless the key is `<step>:<business fact>`, 1..255 characters. */
export function validateKey(key: unknown): string {
  const k = checkText("key", key);
  if (!STEP_PREFIX.test(k)) {
    throw new InvalidEffectKeyError(
      `effect key ${JSON.stringify(k)} must start with a step name, like "settle:invoice-123" (letters, digits, _ . - then ":")`,
      { field: "key" },
    );
  }
  return k;
}

/**
 * The idempotency key to send to a third party: derived from tenant + key only, so every
 * attempt of the effect sends the same one. A hash, so it reveals neither tenant nor key, is
 * 46 characters of [A-Za-z0-9_-], and never collides across tenants.
 */
export function providerKeyFor(tenant: string, key: string): string {
  return `ob_${createHash("sha256").update(tenant).update("\u0001").update(key).digest("base64url")}`;
}

/** JSON with object keys sorted, so logically equal payloads hash equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (v && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date)) {
      return Object.fromEntries(
        Object.keys(v as object)
          .sort()
          .map((k) => [k, (v as Record<string, unknown>)[k]]),
      );
    }
    return v;
  });
}

// Tags for what JSON cannot say. A plain JSON payload never passes through them, so its hash is
// the same as before these existed (hashes stored by earlier versions still match).
const TAG = { map: "\u0000Map", set: "\u0000Set", bigint: "\u0000BigInt" } as const;

/**
 * The payload as a JSON-able tree that says what it means: a Map by its entries and a Set by its
 * members (both sorted, so insertion order does not matter), a BigInt by its digits. A cycle
 * cannot be fingerprinted: InvalidEffectInputError (field payload). toJSON is honoured as JSON does.
 */
function fingerprintTree(value: unknown, ancestors: object[]): unknown {
  if (typeof value === "bigint") return { [TAG.bigint]: value.toString() };
  if (value === null || typeof value !== "object") return value;
  const withJson = value as { toJSON?: (key: string) => unknown };
  if (typeof withJson.toJSON === "function") return fingerprintTree(withJson.toJSON(""), ancestors);
  if (ancestors.includes(value)) {
    throw new InvalidEffectInputError(
      "payload contains a cycle: it cannot be fingerprinted; pass the fields that identify the request",
      {
        field: "payload",
      },
    );
  }
  ancestors.push(value);
  try {
    const sortByJson = (items: unknown[]) =>
      items.map((item) => [canonicalJson(item) ?? "undefined", item] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (value instanceof Map) {
      const entries = [...value.entries()].map(([k, v]) => [fingerprintTree(k, ancestors), fingerprintTree(v, ancestors)]);
      return { [TAG.map]: sortByJson(entries).map(([, entry]) => entry) };
    }
    if (value instanceof Set) {
      return { [TAG.set]: sortByJson([...value].map((item) => fingerprintTree(item, ancestors))).map(([, item]) => item) };
    }
    if (Array.isArray(value)) return value.map((item) => fingerprintTree(item, ancestors));
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) out[k] = fingerprintTree((value as Record<string, unknown>)[k], ancestors);
    return out;
  } finally {
    ancestors.pop();
  }
}

/**
 * sha256 of the canonical payload, or null when there is no payload to compare. Object key order,
 * Map and Set insertion order do not change it; contents do. Throws InvalidEffectInputError
 * (field payload) for a cycle or a payload whose toJSON throws.
 */
export function requestHash(payload: unknown): string | null {
  if (payload === undefined) return null;
  let text: string;
  try {
    text = canonicalJson(fingerprintTree(payload, [])) ?? "null";
  } catch (error) {
    if (error instanceof InvalidEffectInputError) throw error;
    throw new InvalidEffectInputError(
      `payload cannot be fingerprinted: ${error instanceof Error ? error.message : String(error)}`,
      { field: "payload", cause: error },
    );
  }
  return createHash("sha256").update(text).digest("hex");
}
