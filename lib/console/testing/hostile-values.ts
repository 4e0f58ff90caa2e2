/**
 * What a hostile review stored in an outcome and an error message and then found on the API, the
 * Keys page and its RSC payload (issue 35, finding 7): secrets under names the field words do not
 * know, so only their values can give them away. HOSTILE_SECRETS are the substrings that must
 * never leave the server, whatever page, route or export shows the stored value.
 */
const STRIPE_KEY = "sk_live_51HxQvR2eZvKYlo2C8fJq0aBcD";
const BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl";
const COOKIE = "sessionid=9f8e7d6c5b4a; csrftoken=Zx81Qw";
const PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
const IBAN = "DE89 3704 0044 0532 0130 00";
const DOTTED_CARD = "4111.1111.1111.1111";
const NON_ASCII_EMAIL = "zoë.łukasz@bücher.example";
const PASSWORD = "hunter2-Corr3ct";

export const HOSTILE_OUTCOME = {
  stripeKey: STRIPE_KEY,
  auth: `Bearer ${BEARER}`,
  headers: { Cookie: COOKIE },
  private_key: `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----\n`,
  bankAccount: IBAN,
  reference: DOTTED_CARD,
  contact: NON_ASCII_EMAIL,
  kept: "ch_hostile_1 paid",
};

export const HOSTILE_ERROR = `connect to db failed: password=${PASSWORD} host=db.internal user=app`;

/** Substrings of the values above that must never reach a caller (the card's and IBAN's middles: the last four may show). */
export const HOSTILE_SECRETS = [
  "sk_live_51HxQvR2",
  BEARER.slice(0, 20),
  "9f8e7d6c5b4a",
  PEM_BODY.slice(0, 20),
  "3704 0044 0532",
  "4111.1111.1111",
  "łukasz",
  "bücher",
  PASSWORD,
];
