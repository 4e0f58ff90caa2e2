import { loadConfig } from "../config";

/**
 * The redaction hook: runs on every stored outcome and every stored error message before it leaves
 * the server (the API, the Keys page, the Violations page).
 *
 * By default:
 *  - a field whose name contains one of DEFAULT_REDACTED_FIELD_WORDS as a word (`cardNumber`,
 *    `api-key`, `customer_email`, `X-Authorization`, `cvv2`) has its whole value shown as
 *    `[redacted]`, whatever it holds; words of four letters or more also match inside a
 *    one-word name (`accesstoken`, `creditcard`);
 *  - in every string: card numbers (13-19 digits, spaces or dashes allowed, passing the Luhn
 *    check), e-mail addresses and Onceboard API tokens (`ob_` + 43 base64url characters, the shape
 *    lib/auth/tokens.ts makes) are masked.
 * ONCEBOARD_REDACT_FIELD_WORDS replaces the word list, ONCEBOARD_REDACT_FIELDS adds to it (and is
 * honoured even with ONCEBOARD_REDACT=off, which turns the rest off). setOutcomeRedactor()
 * replaces the hook in code (e.g. from instrumentation.ts) with your own.
 */
export type OutcomeRedactor = (outcome: unknown) => unknown;

declare global {
  var __onceboardRedactor: OutcomeRedactor | undefined;
}

export function setOutcomeRedactor(redactor: OutcomeRedactor | undefined): void {
  globalThis.__onceboardRedactor = redactor;
}

/** The words a field name is redacted for unless ONCEBOARD_REDACT_FIELD_WORDS says otherwise. */
export const DEFAULT_REDACTED_FIELD_WORDS = [
  "password",
  "passwd",
  "secret",
  "token",
  "api_key",
  "authorization",
  "cvv",
  "cvc",
  "ssn",
  "iban",
  "card",
  "pan",
  "phone",
  "email",
] as const;

/** Words this long also match inside a one-word field name ("accesstoken", "creditcard"); shorter ones ("pan", "ssn") only as words. */
const INFIX_MIN_LENGTH = 4;

/**
 * A field name as words: split at `_`, `-`, `.`, spaces and other punctuation, at lower→upper case
 * changes (`cardNumber`), at the end of an upper-case run (`APIKey` → api, key) and between letters
 * and digits (`cvv2`).
 */
export function fieldWords(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .replace(/([A-Za-z])(\d)/g, "$1 $2")
    .replace(/(\d)([A-Za-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

interface FieldMatcher {
  /** Each configured entry as its words: "api_key" → ["api", "key"]. */
  terms: string[][];
}

function matcherFor(words: readonly string[]): FieldMatcher {
  return { terms: words.map(fieldWords).filter((t) => t.length > 0) };
}

/** True when `name` holds one of the matcher's terms as consecutive words (or, for a long term, inside one word). */
function matches(matcher: FieldMatcher, name: string): boolean {
  const words = fieldWords(name);
  if (words.length === 0) return false;
  for (const term of matcher.terms) {
    const joined = term.join("");
    for (let i = 0; i + term.length <= words.length; i++) {
      if (term.every((w, j) => words[i + j] === w)) return true;
    }
    // "apikey", "accesstoken", "newpassword": one word that holds the term run together.
    if (term.length > 1 && words.includes(joined)) return true;
    if (joined.length >= INFIX_MIN_LENGTH && words.some((w) => w.includes(joined))) return true;
  }
  return false;
}

interface Policy {
  fields: FieldMatcher;
  /** Card numbers, e-mail addresses and tokens inside strings. */
  values: boolean;
}

// Parsed once per distinct configuration (loadConfig() returns the same values until the
// environment changes), not on every field of every outcome.
let cached: { words: string; extra: string; values: boolean; policy: Policy } | undefined;

function currentPolicy(): Policy | null {
  const config = loadConfig();
  const values = config.ONCEBOARD_REDACT !== "off";
  const extra = config.ONCEBOARD_REDACT_FIELDS ?? [];
  const words = values ? (config.ONCEBOARD_REDACT_FIELD_WORDS ?? DEFAULT_REDACTED_FIELD_WORDS) : [];
  if (!values && extra.length === 0) return null;
  const wordsKey = words.join(",");
  const extraKey = extra.join(",");
  if (cached && cached.words === wordsKey && cached.extra === extraKey && cached.values === values) return cached.policy;
  const policy = { fields: matcherFor([...words, ...extra]), values };
  cached = { words: wordsKey, extra: extraKey, values, policy };
  return policy;
}

export function redactOutcome(outcome: unknown): unknown {
  if (globalThis.__onceboardRedactor) return globalThis.__onceboardRedactor(outcome);
  const policy = currentPolicy();
  if (policy === null) return outcome;
  return walk(outcome, policy, 0);
}

/** A stored message (an effect's error, a violation's driver message) through the same hook. */
export function redactMessage(text: string): string {
  if (globalThis.__onceboardRedactor) {
    const out = globalThis.__onceboardRedactor(text);
    return typeof out === "string" ? out : JSON.stringify(out);
  }
  const policy = currentPolicy();
  return policy?.values ? redactText(text) : text;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
const CARD_CANDIDATE = /\b\d(?:[ -]?\d){12,18}\b/g;
// lib/auth/tokens.ts: `ob_` + 32 random bytes in base64url (43 characters), anywhere in a string.
const ONCEBOARD_TOKEN = /(?<![A-Za-z0-9_-])ob_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The value patterns alone: card numbers, e-mail addresses, Onceboard tokens. */
export function redactText(text: string): string {
  return text
    .replace(ONCEBOARD_TOKEN, "[token]")
    .replace(CARD_CANDIDATE, (match) => {
      const digits = match.replace(/\D/g, "");
      return digits.length >= 13 && digits.length <= 19 && luhn(digits) ? `[card …${digits.slice(-4)}]` : match;
    })
    .replace(EMAIL, "[email]");
}

function walk(value: unknown, policy: Policy, depth: number): unknown {
  if (depth > 50) return "[too deep]";
  if (typeof value === "string") return policy.values ? redactText(value) : value;
  // A card number stored as a JSON number.
  if (typeof value === "number" && policy.values && Number.isInteger(value) && String(value).length >= 13) {
    const text = redactText(String(value));
    return text === String(value) ? value : text;
  }
  if (Array.isArray(value)) return value.map((item) => walk(item, policy, depth + 1));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) {
      out[name] = matches(policy.fields, name) ? "[redacted]" : walk(item, policy, depth + 1);
    }
    return out;
  }
  return value;
}
