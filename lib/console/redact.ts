import { loadConfig } from "../config";

/**
 * The redaction hook: runs on every outcome before it leaves the server (API and Keys page).
 * Default: card numbers (13-19 digits, spaces or dashes allowed, passing the Luhn check) and
 * e-mail addresses anywhere in string values, plus the values of fields named in
 * ONCEBOARD_REDACT_FIELDS. ONCEBOARD_REDACT=off turns the default off; setOutcomeRedactor()
 * replaces the hook in code (e.g. from instrumentation.ts) with your own.
 */
export type OutcomeRedactor = (outcome: unknown) => unknown;

declare global {
  var __onceboardRedactor: OutcomeRedactor | undefined;
}

export function setOutcomeRedactor(redactor: OutcomeRedactor | undefined): void {
  globalThis.__onceboardRedactor = redactor;
}

export function redactOutcome(outcome: unknown): unknown {
  if (globalThis.__onceboardRedactor) return globalThis.__onceboardRedactor(outcome);
  const config = loadConfig();
  const fields = new Set((config.ONCEBOARD_REDACT_FIELDS ?? []).map((f) => f.toLowerCase()));
  if (config.ONCEBOARD_REDACT === "off" && fields.size === 0) return outcome;
  return walk(outcome, fields, config.ONCEBOARD_REDACT !== "off", 0);
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
const CARD_CANDIDATE = /\b\d(?:[ -]?\d){12,18}\b/g;

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

export function redactText(text: string): string {
  return text
    .replace(CARD_CANDIDATE, (match) => {
      const digits = match.replace(/\D/g, "");
      return digits.length >= 13 && digits.length <= 19 && luhn(digits) ? `[card …${digits.slice(-4)}]` : match;
    })
    .replace(EMAIL, "[email]");
}

function walk(value: unknown, fields: Set<string>, defaults: boolean, depth: number): unknown {
  if (depth > 50) return "[too deep]";
  if (typeof value === "string") return defaults ? redactText(value) : value;
  // A card number stored as a JSON number.
  if (typeof value === "number" && defaults && Number.isInteger(value) && String(value).length >= 13) {
    const text = redactText(String(value));
    return text === String(value) ? value : text;
  }
  if (Array.isArray(value)) return value.map((item) => walk(item, fields, defaults, depth + 1));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) {
      out[name] = fields.has(name.toLowerCase()) ? "[redacted]" : walk(item, fields, defaults, depth + 1);
    }
    return out;
  }
  return value;
}
