import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../config";
import { loadProvidersFile, parseProviders, providerObjectUrl, providerOf, reconcileProviders } from "./providers";

/**
 * The providers file (ONCEBOARD_PROVIDERS_FILE): which job types and steps each provider holds,
 * what to compare, its key window and its object URL. A bad file is refused at start with one line
 * per mistake, each naming where it is.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-providers-test-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const write = (name: string, body: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, body);
  return file;
};

const payments = {
  name: "payments",
  label: "PayCo",
  objectNoun: "charge",
  jobTypes: ["invoice.settle"],
  steps: [{ keyPrefix: "settle:" }, { keyPrefix: "refund-invoice:", noun: "refund" }],
  keyWindowHours: 48,
  keyRequired: true,
  compareFields: ["amount", "currency"],
  objectUrl: "https://pay.example/charges/{id}",
  adapter: { type: "stripe" },
};
const labels = {
  name: "labels",
  objectNoun: "label",
  jobTypes: ["shipment.label"],
  steps: [{ keyPrefix: "label:" }],
  keyWindowHours: null,
  adapter: {
    type: "http-json",
    url: "http://127.0.0.1:4700/labels",
    mapping: { items: "data", next: "next", id: "id", key: "ref.key", tenant: "ref.tenant", created: "created_at" },
    bearerTokenEnv: "LABELS_TOKEN",
  },
};

const mistakes = (raw: unknown): string[] => {
  try {
    parseProviders(raw, "providers.json", { STRIPE_API_KEY: "sk" });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.split("\n");
  }
  throw new Error("accepted");
};

describe("the providers file", () => {
  it("maps a user's own job types and steps, key window, fields and object URL", () => {
    const providers = parseProviders({ providers: [payments, labels] }, "providers.json", {
      STRIPE_API_KEY: "sk",
      env: { LABELS_TOKEN: "t" },
    });
    expect(providers[0]).toMatchObject({
      name: "payments",
      label: "PayCo",
      jobTypes: ["invoice.settle"],
      keyPrefixes: ["settle:", "refund-invoice:"],
      stepNouns: { "refund-invoice:": "refund" },
      keyWindowSeconds: 48 * 3600,
      keyRequired: true,
      compareFields: ["amount", "currency"],
      configured: true,
    });
    expect(providers[1]).toMatchObject({
      name: "labels",
      label: "labels",
      keyWindowSeconds: null,
      keyRequired: false,
      compareFields: [],
      objectUrl: null,
      adapter: { type: "http-json", url: "http://127.0.0.1:4700/labels", bearerTokenEnv: "LABELS_TOKEN" },
      configured: true,
    });
    expect(providerObjectUrl(providers[0]!, "ch 1/2")).toBe("https://pay.example/charges/ch%201%2F2");
    expect(providerOf(providers, { jobType: "invoice.settle", key: "settle:INV-000123/v1" })?.name).toBe("payments");
    expect(providerOf(providers, { jobType: "invoice.settle", key: "notify:INV-000123" })).toBeUndefined();
    expect(providerOf(providers, { jobType: "subscription.renew", key: "settle:INV-1" })).toBeUndefined();
  });

  it("says what is missing for a provider without its credentials", () => {
    const [p, l] = parseProviders({ providers: [payments, labels] }, "f", { STRIPE_API_KEY: undefined, env: {} });
    expect(p).toMatchObject({ configured: false, notConfiguredReason: "set STRIPE_API_KEY to read PayCo" });
    expect(l).toMatchObject({ configured: false, notConfiguredReason: "set LABELS_TOKEN (its bearer token) to read labels" });
  });

  it("lists every mistake on its own line, naming where it is", () => {
    expect(
      mistakes({
        providers: [
          { ...payments, jobTypes: [], steps: [{ keyPrefix: "settle" }], compareFields: ["amount", "colour"] },
          {
            ...labels,
            name: "Labels!",
            keyWindowHours: -1,
            adapter: { ...labels.adapter, url: "ftp://x", bearerTokenEnv: "lower" },
          },
          { ...payments, objectUrl: "https://pay.example/charges", extra: true },
        ],
      }),
    ).toEqual([
      "invalid configuration: ONCEBOARD_PROVIDERS_FILE (providers.json) has 9 mistakes:",
      "  providers.0.jobTypes must list at least one job type",
      '  providers.0.steps.0.keyPrefix must start with a step name and ":", like "settle:"',
      '  providers.0.compareFields.1 Invalid option: expected one of "amount"|"currency"|"status"',
      "  providers.1.name must be lower case letters, digits, _ or -, starting with a letter (at most 40)",
      "  providers.1.keyWindowHours Too small: expected number to be >0",
      "  providers.1.adapter.url must be an http(s) URL",
      "  providers.1.adapter.bearerTokenEnv must be an environment variable's name, like MAILER_TOKEN",
      "  providers.2.objectUrl must contain {id}, where the object's id goes",
      '  providers.2 Unrecognized key: "extra"',
    ]);
  });

  it("refuses a name used twice, one step held by two providers, and a file without its providers list", () => {
    expect(mistakes({ providers: [payments, { ...labels, name: "payments" }] })).toEqual([
      "invalid configuration: ONCEBOARD_PROVIDERS_FILE (providers.json) has a mistake:",
      '  providers.1.name repeats providers.0.name "payments"',
    ]);
    expect(
      mistakes({ providers: [payments, { ...labels, jobTypes: ["invoice.settle"], steps: [{ keyPrefix: "settle:" }] }] }),
    ).toEqual([
      "invalid configuration: ONCEBOARD_PROVIDERS_FILE (providers.json) has a mistake:",
      '  providers.1.steps "settle:" of job type invoice.settle is already held by provider payments: one provider per step',
    ]);
    expect(mistakes({ provider: [] })).toEqual([
      "invalid configuration: ONCEBOARD_PROVIDERS_FILE (providers.json) has 2 mistakes:",
      "  providers Invalid input: expected array, received undefined",
      '  (file) Unrecognized key: "provider"',
    ]);
  });

  it("refuses an object URL an id could turn into another site's link, each with its own line", () => {
    const withUrl = (objectUrl: string, name: string) => ({ ...payments, name, jobTypes: [name], objectUrl });
    expect(
      mistakes({
        providers: [
          withUrl("javascript:alert('{id}')", "a"),
          withUrl("https://{id}.pay.example/charges", "b"),
          withUrl("https://pay.example{id}", "c"),
          withUrl("https://ops:hunter2@pay.example/charges/{id}", "d"),
          withUrl("/charges/{id}", "e"),
        ],
      }),
    ).toEqual([
      "invalid configuration: ONCEBOARD_PROVIDERS_FILE (providers.json) has 5 mistakes:",
      "  providers.0.objectUrl must be an http(s) URL",
      "  providers.1.objectUrl must put {id} in the path, query or fragment, not in the host",
      "  providers.2.objectUrl must put {id} in the path, query or fragment, not in the host",
      "  providers.3.objectUrl must not carry a user or password: every console user sees the link",
      "  providers.4.objectUrl must be an http(s) URL",
    ]);
    // The id is encoded into the path: a slash, a scheme or a query of its own stays inside it.
    const [p] = parseProviders({ providers: [{ ...payments, objectUrl: "https://pay.example/c/{id}?from=onceboard" }] }, "f", {
      STRIPE_API_KEY: "sk",
    });
    expect(providerObjectUrl(p!, "javascript:alert(1)//x?y#z")).toBe(
      "https://pay.example/c/javascript%3Aalert(1)%2F%2Fx%3Fy%23z?from=onceboard",
    );
    expect(providerObjectUrl(p!, "")).toBeNull();
    // A pattern that never went through the file's check is not trusted either.
    expect(providerObjectUrl({ objectUrl: "javascript:{id}" }, "x")).toBeNull();
  });

  it("names a file that is not JSON, or not there; unset means no provider at all", () => {
    const broken = write("broken.json", "{ providers: [");
    expect(() => loadProvidersFile(broken, { STRIPE_API_KEY: undefined })).toThrow(
      new RegExp(
        `^invalid configuration: ONCEBOARD_PROVIDERS_FILE \\(${broken.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\) cannot be read as JSON`,
      ),
    );
    expect(() =>
      reconcileProviders({ ONCEBOARD_PROVIDERS_FILE: path.join(dir, "absent.json"), STRIPE_API_KEY: undefined }),
    ).toThrow(/ONCEBOARD_PROVIDERS_FILE \(.*absent\.json\) cannot be read/);
    expect(reconcileProviders({ ONCEBOARD_PROVIDERS_FILE: undefined, STRIPE_API_KEY: "sk" })).toEqual([]);
  });

  it("reads an edited file again without a restart", () => {
    const file = write("live.json", JSON.stringify({ providers: [payments] }));
    expect(reconcileProviders({ ONCEBOARD_PROVIDERS_FILE: file, STRIPE_API_KEY: "sk" }).map((p) => p.jobTypes)).toEqual([
      ["invoice.settle"],
    ]);
    fs.writeFileSync(file, JSON.stringify({ providers: [{ ...payments, jobTypes: ["invoice.settle", "subscription.renew"] }] }));
    expect(reconcileProviders({ ONCEBOARD_PROVIDERS_FILE: file, STRIPE_API_KEY: "sk" }).map((p) => p.jobTypes)).toEqual([
      ["invoice.settle", "subscription.renew"],
    ]);
  });
});
