import { randomBytes } from "node:crypto";
import fc from "fast-check";
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
import { HOSTILE_ERROR, HOSTILE_OUTCOME, HOSTILE_SECRETS } from "./testing/hostile-values";

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
    cookie: ["cookie", "Cookie", "set-cookie", "sessionCookie"],
    private_key: ["private_key", "privateKey", "PRIVATE-KEY", "privatekey"],
    credential: ["credential", "credentials", "awsCredentials"],
    passphrase: ["passphrase", "keyPassphrase"],
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

describe("redaction by value, whatever the field is called (issue 35)", () => {
  it("masks every secret of the hostile outcome and error message", () => {
    withEnv({});
    const shown = JSON.stringify([redactOutcome(HOSTILE_OUTCOME), redactMessage(HOSTILE_ERROR)]);
    for (const secret of HOSTILE_SECRETS) expect(shown, secret).not.toContain(secret);
    expect(redactOutcome(HOSTILE_OUTCOME)).toMatchObject({ kept: "ch_hostile_1 paid", reference: "[card …1111]" });
    expect(redactMessage(HOSTILE_ERROR)).toBe("connect to db failed: password=[redacted] host=db.internal user=app");
  });

  it("masks each kind of secret in the spellings it comes in", () => {
    withEnv({});
    const cases: [string, string][] = [
      ["key sk_test_4eC39HqLyjWDarjtT1zdp7dc here", "key [secret key] here"],
      ["rk_live_abcdefgh12345678", "[secret key]"],
      ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "[secret key]"],
      ["ghp_16C7e42F292c6912E7710c838347Ae178B4a", "[secret key]"],
      ["AKIAIOSFODNN7EXAMPLE", "[secret key]"],
      ["Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==", "Authorization: [redacted]"],
      ["curl -H 'authorization: Bearer abc.def.ghi'", "curl -H 'authorization: [redacted]"],
      ["sent bearer mF_9.B5f-4.1JqM to the API", "sent bearer [redacted] to the API"],
      ["Set-Cookie: sid=31d4d96e407aad42; Path=/", "Set-Cookie: [redacted]"],
      ["-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[private key]"],
      ["key: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEE (cut", "key: [private key]"],
      ["payout to GB82 WEST 1234 5698 7654 32 today", "payout to [iban …5432] today"],
      ["GB82WEST12345698765432", "[iban …5432]"],
      ["card 4111\u00a01111\u00a01111\u00a01111", "card [card …1111]"],
      ["card 4111\u30001111\u30001111\u30001111", "card [card …1111]"],
      ["4111/1111/1111/1111 and 4111_1111_1111_1111", "[card …1111] and [card …1111]"],
      ["5500 - 0000 - 0000 - 0004", "[card …0004]"],
      ["mail 用户@例子.广告 now", "mail [email] now"],
      ["почта: иван@пример.рф", "почта: [email]"],
      ["user@xn--bcher-kva.example", "[email]"],
      ['failed {"password": "s3cr3t!", "user": "app"}', 'failed {"password": [redacted], "user": "app"}'],
      ["retry api_key=AbC123xyz&page=2", "retry api_key=[redacted]&page=2"],
      ["client_secret: 'q w e'", "client_secret: [redacted]"],
    ];
    for (const [input, expected] of cases) expect(redactText(input), input).toBe(expected);
  });

  it("keeps ordinary text: prose, times, amounts, ids and numbers that are no card", () => {
    withEnv({});
    for (const kept of [
      "status: paid, amount: 4200",
      "basic information about the bearer of this note",
      "2026-12-01T10:30:00Z took 1.25 s",
      "order ord-4711 charged ch_1N2b3C4d",
      "order 4111 1111 1111 1112",
      "Key (email)=(x) already exists",
      "DE00 0000 0000 0000 0000 00",
      "https://example.test/path?page=2",
    ])
      expect(redactText(kept), kept).toBe(kept);
  });

  const luhnComplete = (body: string) => {
    for (let check = 0; check <= 9; check++) {
      const digits = body + check;
      let sum = 0;
      for (let i = 0; i < digits.length; i++) {
        let d = Number(digits[digits.length - 1 - i]);
        if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
        sum += d;
      }
      if (sum % 10 === 0) return digits;
    }
    throw new Error("unreachable");
  };
  const separators = fc.constantFrom(" ", "-", ".", "\u00a0", "\u3000", "\u2009", "/", "_", " - ", "–", "\u202f");
  const prose = fc.stringMatching(/^[A-Za-z ,;()]{0,20}$/);

  it("property: a Luhn-valid card number with any separators between any digits, in any text, keeps only its last four", () => {
    withEnv({});
    fc.assert(
      fc.property(
        fc.stringMatching(/^[1-9][0-9]{11,17}$/),
        fc.array(fc.tuple(fc.nat(), separators), { maxLength: 6 }),
        prose,
        prose,
        (body, cuts, before, after) => {
          const digits = luhnComplete(body);
          let spelled = digits;
          for (const [at, sep] of [...cuts].sort((a, b) => b[0] - a[0])) {
            const i = 1 + (at % (spelled.length - 1));
            if (/\d/.test(spelled[i - 1] ?? "") && /\d/.test(spelled[i] ?? ""))
              spelled = spelled.slice(0, i) + sep + spelled.slice(i);
          }
          const shown = redactOutcome({ ref: `${before} ${spelled} ${after}` }) as { ref: string };
          expect(shown.ref.replace(/\D/g, "")).toBe(digits.slice(-4));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("property: an e-mail address in any script is masked", () => {
    withEnv({});
    const letters = fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }).filter((s) => /^[\p{L}\p{N}]+$/u.test(s));
    fc.assert(
      fc.property(letters, letters, fc.stringMatching(/^[a-z]{2,6}$/), prose, (local, domain, tld, before) => {
        const shown = redactMessage(`${before} <${local}@${domain}.${tld}>`);
        expect(shown).not.toContain("@");
        expect(shown).toContain("[email]");
      }),
      { numRuns: 300 },
    );
  });

  it("property: a secret-key, a credential header or a named secret is masked under any field name", () => {
    withEnv({});
    const secretBody = fc.stringMatching(/^[A-Za-z0-9]{24,40}$/);
    const spelled = fc.oneof(
      secretBody.map((s) => [`sk_live_${s}`, s] as const),
      secretBody.map((s) => [`rk_test_${s}`, s] as const),
      secretBody.map((s) => [`Bearer ${s}1`, s] as const),
      secretBody.map((s) => [`Cookie: session=${s}`, s] as const),
      secretBody.map((s) => [`password=${s}`, s] as const),
      secretBody.map((s) => [`token: "${s}"`, s] as const),
    );
    const fieldName = fc.stringMatching(/^[a-z][A-Za-z]{0,12}$/);
    fc.assert(
      fc.property(spelled, fieldName, prose, ([value, secret], name, before) => {
        const shown = JSON.stringify(redactOutcome({ [name]: `${before} ${value}` }));
        expect(shown).not.toContain(secret);
      }),
      { numRuns: 300 },
    );
  });

  it("property: a valid IBAN of any country, grouped or not, keeps only its last four", () => {
    withEnv({});
    const ibanOf = (country: string, bban: string) => {
      const numeric = [...`${bban}${country}00`].map((c) => (c >= "A" ? String(c.charCodeAt(0) - 55) : c)).join("");
      let remainder = 0;
      for (const d of numeric) remainder = (remainder * 10 + Number(d)) % 97;
      return `${country}${String(98 - remainder).padStart(2, "0")}${bban}`;
    };
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Z]{2}$/),
        fc.stringMatching(/^[A-Z0-9]{11,26}$/),
        fc.boolean(),
        (country, bban, grouped) => {
          const iban = ibanOf(country, bban);
          const text = grouped ? (iban.match(/.{1,4}/g) ?? []).join(" ") : iban;
          const shown = redactMessage(`payout to ${text}.`);
          expect(shown).toBe(`payout to [iban …${iban.slice(-4)}].`);
        },
      ),
      { numRuns: 300 },
    );
  });
});
