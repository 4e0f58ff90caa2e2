import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { looksLikeToken } from "../auth/tokens";
import { ConfigError, loadConfig } from "../config";
import {
  type DEFAULT_REDACTED_FIELD_WORDS,
  fieldWords,
  redactMessage,
  redactOutcome,
  redactText,
  setOutcomeRedactor,
} from "./redact";

const ENV = ["ONCEBOARD_REDACT", "ONCEBOARD_REDACT_FIELDS", "ONCEBOARD_REDACT_FIELD_WORDS"] as const;
const saved = Object.fromEntries(ENV.map((name) => [name, process.env[name]]));
afterEach(() => {
  for (const name of ENV) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  setOutcomeRedactor(undefined);
});
const withEnv = (env: Partial<Record<(typeof ENV)[number], string>>) => {
  for (const name of ENV) delete process.env[name];
  Object.assign(process.env, env);
};

const token = () => `ob_${randomBytes(32).toString("base64url")}`;

describe("redaction by field name", () => {
  // One field per default word, in the spellings outcomes use; each value is harmless text, so
  // only the field name can be what redacts it.
  const FIELDS: Record<(typeof DEFAULT_REDACTED_FIELD_WORDS)[number], string[]> = {
    password: ["password", "newPassword", "password_hash", "PASSWORD", "userpassword"],
    passwd: ["passwd", "db_passwd"],
    secret: ["secret", "clientSecret", "webhook-secret"],
    token: ["token", "accessToken", "refresh_token", "accesstoken"],
    api_key: ["api_key", "apiKey", "api-key", "APIKey", "X-Api-Key", "apikey"],
    authorization: ["authorization", "Authorization", "proxy_authorization"],
    cvv: ["cvv", "cvv2", "cardCvv"],
    cvc: ["cvc", "CVC"],
    ssn: ["ssn", "customerSSN", "ssn_last4"],
    iban: ["iban", "payoutIban", "IBAN"],
    card: ["card", "cardNumber", "card_number", "creditcard", "CardHolder"],
    pan: ["pan", "PAN", "card_pan", "panValue"],
    phone: ["phone", "phoneNumber", "mobile_phone", "telephone"],
    email: ["email", "customer_email", "emailAddress", "EMAIL", "billing-email"],
  };
  for (const [word, names] of Object.entries(FIELDS)) {
    it(`redacts every field named with "${word}"`, () => {
      withEnv({});
      for (const name of names) {
        expect(redactOutcome({ [name]: "plain value 42", kept: "plain value 42" }), name).toEqual({
          [name]: "[redacted]",
          kept: "plain value 42",
        });
      }
    });
  }

  it("redacts the whole value of a matched field, nested objects and arrays included, at any depth", () => {
    withEnv({});
    expect(
      redactOutcome({ order: { payment: { card: { last4: "4242", brand: "visa" } } }, users: [{ email: ["a", "b"], id: 7 }] }),
    ).toEqual({ order: { payment: { card: "[redacted]" } }, users: [{ email: "[redacted]", id: 7 }] });
  });

  it("keeps fields whose names only look alike: the short words match as words", () => {
    withEnv({});
    const kept = {
      company: "x",
      span: "x",
      expand: "x",
      lesson: "x",
      japan: "x",
      amount: 4200,
      chargeId: "ch_1",
      status: "paid",
    };
    expect(redactOutcome(kept)).toEqual(kept);
  });

  it("splits field names into words", () => {
    expect(fieldWords("cardNumber")).toEqual(["card", "number"]);
    expect(fieldWords("APIKey")).toEqual(["api", "key"]);
    expect(fieldWords("customer_email")).toEqual(["customer", "email"]);
    expect(fieldWords("x-api-key")).toEqual(["x", "api", "key"]);
    expect(fieldWords("cvv2")).toEqual(["cvv", "2"]);
  });
});

describe("redaction by value", () => {
  it("masks Onceboard tokens, card numbers and e-mail addresses inside any string", () => {
    withEnv({});
    const secret = token();
    expect(looksLikeToken(secret)).toBe(true);
    expect(redactOutcome({ note: `use ${secret} then`, raw: secret })).toEqual({ note: "use [token] then", raw: "[token]" });
    expect(redactText("paid 4111 1111 1111 1111 by ada@example.com")).toBe("paid [card …1111] by [email]");
    // Not a token: too short, or part of a longer identifier.
    expect(redactText("ob_short")).toBe("ob_short");
    expect(redactText(`x${secret}`)).toBe(`x${secret}`);
    // Not a card: fails the Luhn check.
    expect(redactText("order 4111 1111 1111 1112")).toBe("order 4111 1111 1111 1112");
    expect(redactOutcome({ n: 4111111111111111 })).toEqual({ n: "[card …1111]" });
  });

  it("redacts messages with the same patterns", () => {
    withEnv({});
    expect(redactMessage(`Key (email)=(ada@example.com) already exists; token ${token()}`)).toBe(
      "Key (email)=([email]) already exists; token [token]",
    );
  });
});

describe("redaction configuration", () => {
  it("ONCEBOARD_REDACT_FIELDS adds words to the defaults", () => {
    withEnv({ ONCEBOARD_REDACT_FIELDS: "dob, passport_no" });
    expect(redactOutcome({ dob: "1990", passportNo: "X1", password: "p", name: "Ada" })).toEqual({
      dob: "[redacted]",
      passportNo: "[redacted]",
      password: "[redacted]",
      name: "Ada",
    });
  });

  it("ONCEBOARD_REDACT_FIELD_WORDS replaces the default words; the value patterns stay", () => {
    withEnv({ ONCEBOARD_REDACT_FIELD_WORDS: "nickname" });
    expect(redactOutcome({ nickname: "ace", phone: "+1 555 0100", note: "ada@example.com" })).toEqual({
      nickname: "[redacted]",
      phone: "+1 555 0100",
      note: "[email]",
    });
  });

  it("ONCEBOARD_REDACT=off turns the defaults off, but still honours ONCEBOARD_REDACT_FIELDS", () => {
    withEnv({ ONCEBOARD_REDACT: "off" });
    const outcome = { password: "p", note: "ada@example.com" };
    expect(redactOutcome(outcome)).toBe(outcome);
    expect(redactMessage("ada@example.com")).toBe("ada@example.com");
    withEnv({ ONCEBOARD_REDACT: "off", ONCEBOARD_REDACT_FIELDS: "password" });
    expect(redactOutcome(outcome)).toEqual({ password: "[redacted]", note: "ada@example.com" });
  });

  it("refuses a malformed word list, naming the variable", () => {
    expect(() => loadConfig({ ONCEBOARD_REDACT_FIELDS: "pass*" })).toThrow(ConfigError);
    expect(() => loadConfig({ ONCEBOARD_REDACT_FIELD_WORDS: "ok,bad;word" })).toThrow(/ONCEBOARD_REDACT_FIELD_WORDS/);
    expect(loadConfig({ ONCEBOARD_REDACT_FIELD_WORDS: " a , b ," }).ONCEBOARD_REDACT_FIELD_WORDS).toEqual(["a", "b"]);
  });

  it("setOutcomeRedactor replaces the hook for outcomes and messages", () => {
    setOutcomeRedactor(() => "[all hidden]");
    expect(redactOutcome({ a: 1 })).toBe("[all hidden]");
    expect(redactMessage("anything")).toBe("[all hidden]");
  });
});
