import { createHash } from "node:crypto";
import { InvalidEffectKeyError } from "./errors";

export const MAX_KEY_LENGTH = 255;

// Control characters (C0, DEL, C1): invisible in logs, and chr(1) separates tenant from key in
// the claim's advisory-lock hash.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

// The step name is part of the key ("capture:order-123"), so two steps of one job, or two jobs
// touching one order, cannot share a key by accident.
const STEP_PREFIX = /^[A-Za-z0-9_.-]+:./s;

function checkText(what: "tenant" | "key", value: unknown): string {
  if (typeof value !== "string" || value.length === 0)
    throw new InvalidEffectKeyError(`effect ${what} must be a non-empty string`);
  if (value.length > MAX_KEY_LENGTH)
    throw new InvalidEffectKeyError(`effect ${what} is ${value.length} characters; at most ${MAX_KEY_LENGTH}`);
  if (CONTROL.test(value)) throw new InvalidEffectKeyError(`effect ${what} contains a control character`);
  return value;
}

export function validateTenant(tenant: unknown): string {
  return checkText("tenant", tenant);
}

/** Throws InvalidEffectKeyError unless the key is `<step>:<business fact>`, 1..255 characters. */
export function validateKey(key: unknown): string {
  const k = checkText("key", key);
  if (!STEP_PREFIX.test(k)) {
    throw new InvalidEffectKeyError(
      `effect key ${JSON.stringify(k)} must start with a step name, like "capture:order-123" (letters, digits, _ . - then ":")`,
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

/** sha256 of the canonical payload, or null when there is no payload to compare. */
export function requestHash(payload: unknown): string | null {
  if (payload === undefined) return null;
  return createHash("sha256")
    .update(canonicalJson(payload) ?? "null")
    .digest("hex");
}
