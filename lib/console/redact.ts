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
 *  - in every string, whatever field holds it (a secret under `stripeKey` or `auth` is still a
 *    secret): private keys (PEM blocks), `Cookie:`/`Set-Cookie:`/`Authorization:` header lines,
 *    `Bearer`/`Basic`/`Token`/`Digest` credentials, secret-key prefixes (`sk_live_`, `sk_test_`,
 *    `rk_…`, `whsec_`, `ghp_`, `xox?-`, `AKIA…`, `AIza…`, `sk-…`, Onceboard's `ob_` tokens),
 *    `name=value` and `name: value` pairs whose name is one of the field words (`password=…` in an
 *    error message), IBANs (mod-97 checked), card numbers (13-19 digits with any separators between
 *    them — spaces, NBSP, dots, dashes, slashes — passing the Luhn check) and e-mail addresses in
 *    any script are masked.
 * ONCEBOARD_REDACT_FIELD_WORDS replaces the word list, ONCEBOARD_REDACT_FIELDS adds to it (and is
 * honoured even with ONCEBOARD_REDACT=off, which turns the rest off). setOutcomeRedactor()
 * replaces the hook in code (e.g. from instrumentation.ts) with your own.
 */
type OutcomeRedactor = (outcome: unknown) => unknown;

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
  "cookie",
  "private_key",
  "credential",
  "passphrase",
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
  return policy?.values ? redactText(text, policy.fields) : text;
}

// A PEM private key block, or its start when the end was cut off.
const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;
// A header line that carries a credential, to the end of its line.
const CREDENTIAL_HEADER = /\b((?:set-)?cookie|(?:proxy-)?authorization|x-api-key|x-auth-token)(\s*[:=]\s*)[^\r\n]*/gi;
// An HTTP credential after its scheme: Bearer, Basic (base64 of user:password), Digest.
const SCHEME_CREDENTIAL = /\b(bearer|basic|digest)(\s+)([A-Za-z0-9._~+/=:-]{8,})/gi;

/** A word after "basic" or "bearer" in prose ("basic information") is all one case of letters; a credential is not. */
function looksLikeCredential(value: string): boolean {
  return /[0-9._~+/=:-]/.test(value) || (/[a-z]/.test(value) && /[A-Z]/.test(value));
}
// Secret keys recognisable by their prefix: Stripe (sk_/rk_ live and test, webhook whsec_),
// GitHub, Slack, AWS access key ids, Google API keys, OpenAI-style sk-, npm, and Onceboard's own
// (lib/auth/tokens.ts: `ob_` + 43 base64url characters).
const SECRET_KEY =
  /(?<![A-Za-z0-9_-])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{8,}|whsec_[A-Za-z0-9+/=]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|sk-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}|ob_[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/g;
// `name=value`, `name: value`, `"name": "value"` inside a string; the name is checked against the
// field words, so `password=…` is masked and `status: paid` is not. A value already masked
// ("[redacted]", "[email]") is left as it is.
const NAME_AND_SEPARATOR = /(?<![A-Za-z0-9_.-])(["']?)([A-Za-z][A-Za-z0-9_.-]{0,60})\1(\s*[=:]\s*)/g;
const VALUE_AT_START = /^(?:"[^"]*"|'[^']*'|[^\s"'&;,)\]}]+)/;

function redactNamedValues(text: string, fields: FieldMatcher): string {
  let out = "";
  let copied = 0;
  const names = new RegExp(NAME_AND_SEPARATOR);
  for (let found = names.exec(text); found !== null; found = names.exec(text)) {
    const valueStart = found.index + found[0].length;
    const value = VALUE_AT_START.exec(text.slice(valueStart))?.[0];
    // Not a field word: scanning goes on right after its separator ("failed: password=…").
    if (!value || value.startsWith("[") || !matches(fields, found[2] ?? "")) continue;
    out += `${text.slice(copied, valueStart)}[redacted]`;
    copied = valueStart + value.length;
    names.lastIndex = copied;
  }
  return out + text.slice(copied);
}

// Two letters, two check digits, 11-30 letters or digits (spaces allowed between groups).
const IBAN_CANDIDATE = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])/g;
// What may stand between a card number's digits: any whitespace (NBSP, U+3000 …), dots, dashes
// of every width, underscores, slashes, bars, colons, middle dots and bullets — at most three in a
// row (" - ").
const CARD_SEPARATOR = "[\\s.\\-\u2010-\u2015\u2212_/\\\\|:\u00b7\u2022*]";
const CARD_CANDIDATE = new RegExp(`(?<!\\d)\\d(?:${CARD_SEPARATOR}{0,3}\\d){12,18}(?!\\d)`, "gu");
// An e-mail address in any script: letters and digits of any alphabet on both sides of the @.
const EMAIL =
  /[\p{L}\p{M}\p{N}._%+!#$&'*/=?^`{|}~-]+@[\p{L}\p{M}\p{N}-]+(?:\.[\p{L}\p{M}\p{N}-]+)*\.(?:\p{L}{2,}|xn--[\p{L}\p{N}-]+)/gu;

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

/** ISO 13616's check: the country and check digits moved to the end, letters as 10-35, mod 97 is 1. */
function ibanChecks(compact: string): boolean {
  const moved = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (const ch of moved) {
    const value = ch >= "A" && ch <= "Z" ? String(ch.charCodeAt(0) - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

const DEFAULT_FIELDS = matcherFor(DEFAULT_REDACTED_FIELD_WORDS);

/**
 * The value patterns alone, on any text. `fields` names the words whose `name=value` pairs are
 * masked: the configured ones (the default words unless said otherwise).
 */
export function redactText(text: string, fields: FieldMatcher = currentPolicy()?.fields ?? DEFAULT_FIELDS): string {
  // Credentials first, so a masked one is never read again as a name=value pair or a number.
  const credentials = text
    .replace(PRIVATE_KEY, "[private key]")
    .replace(CREDENTIAL_HEADER, (_m, name: string, sep: string) => `${name}${sep}[redacted]`)
    .replace(SCHEME_CREDENTIAL, (match, scheme: string, space: string, value: string) =>
      looksLikeCredential(value) ? `${scheme}${space}[redacted]` : match,
    )
    .replace(SECRET_KEY, (match) => (match.startsWith("ob_") ? "[token]" : "[secret key]"));
  return redactNamedValues(credentials, fields)
    .replace(IBAN_CANDIDATE, (match) => {
      const compact = match.replace(/ /g, "");
      return compact.length >= 15 && compact.length <= 34 && ibanChecks(compact) ? `[iban …${compact.slice(-4)}]` : match;
    })
    .replace(CARD_CANDIDATE, (match) => {
      const digits = match.replace(/\D/g, "");
      // No card number starts with 0 (ISO/IEC 7812's industry digits are 1-9): "0000 0000 …" passes Luhn but is no card.
      return digits.length >= 13 && digits.length <= 19 && digits[0] !== "0" && luhn(digits)
        ? `[card …${digits.slice(-4)}]`
        : match;
    })
    .replace(EMAIL, "[email]");
}

function walk(value: unknown, policy: Policy, depth: number): unknown {
  if (depth > 50) return "[too deep]";
  if (typeof value === "string") return policy.values ? redactText(value, policy.fields) : value;
  // A card number stored as a JSON number.
  if (typeof value === "number" && policy.values && Number.isInteger(value) && String(value).length >= 13) {
    const text = redactText(String(value), policy.fields);
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
