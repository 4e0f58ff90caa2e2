import { describe, expect, it } from "vitest";
import { ApiError } from "../api/errors";
import { invalidPageQuery, lastValues, pageQueryError, parseKeysPageQuery } from "./page-queries";

const q = (text: string) => new URLSearchParams(text);

describe("the Keys page's query string", () => {
  it("names what is wrong with a Keys URL, and lets a valid one through", () => {
    expect(() => parseKeysPageQuery(q("status=bogus"), { tenantId: null })).toThrow(/^invalid query: status/);
    expect(() => parseKeysPageQuery(q(`q=${"x".repeat(300)}`), { tenantId: null })).toThrow(/q/);
    expect(parseKeysPageQuery(q("q=ord-1&status=&jobType="), { tenantId: null }).params.q).toBe("ord-1");
  });

  it("keeps a tenant session on its own tenant, and lets a platform session name none", () => {
    expect(parseKeysPageQuery(q("tenant=globex&q=a"), { tenantId: "acme" }).params.tenant).toBe("acme");
    expect(parseKeysPageQuery(q("q=a"), { tenantId: null }).params.tenant).toBeUndefined();
  });

  it("takes a repeated key's last value, as the API does", () => {
    expect(lastValues({ q: ["a", "b"], status: undefined }).toString()).toBe("q=b");
    expect(lastValues(q("q=a&q=b")).get("q")).toBe("b");
  });
});

describe("pageQueryError: the status an invalid page URL answers with (proxy.ts)", () => {
  const platform = { tenantId: null };
  const known = new Set(["capture-payment"]);
  // The job-type check's one query, answered from `known` (the rollups' job types).
  const db = () => ({
    query: async (_sql: string, values?: unknown[]) => ({ rows: [{ known: known.has(String(values?.[0])) }] }),
  });
  const status = async (path: string, session: { tenantId: string | null } = platform) => {
    const url = new URL(path, "http://console.test");
    return (await pageQueryError(url.pathname, url.searchParams, session, db as never))?.status ?? 200;
  };

  it("answers 400 for a value each page's API refuses, on every page that reads a query", async () => {
    expect(await status("/keys?status=bogus")).toBe(400);
    expect(await status("/overview?from=notadate")).toBe(400);
    expect(await status("/overview?window=forever")).toBe(400);
    expect(await status("/gaps?range=forever")).toBe(400);
    expect(await status("/violations?limit=0")).toBe(400);
    // A cursor the violations API never returned is refused before the page reads.
    expect(await status("/violations?cursor=bm90LWEtY3Vyc29y")).toBe(400);
    expect(await status("/reconciliation?state=bogus")).toBe(400);
    expect(await status("/retention?runs=0")).toBe(400);
    expect(await status("/audit?limit=-1")).toBe(400);
    expect(await status(`/admin?tenant=${"t".repeat(300)}`)).toBe(400);
    // Each admin table's cursor is checked against its own list: the violations' one is refused.
    expect(await status("/admin?tokensCursor=bm90LWEtY3Vyc29y")).toBe(400);
    expect(await status("/overview?tenant=a%00b")).toBe(400);
  });

  it("answers 404 for a job type no worker reported, and 200 for a valid URL or a page without a query", async () => {
    expect(await status("/overview?jobType=capture-paymnet")).toBe(404);
    expect(await status("/overview?jobType=capture-payment")).toBe(200);
    expect(await status("/overview?window=24h&tenant=")).toBe(200);
    expect(await status("/keys?q=ord-1&status=")).toBe(200);
    expect(await status("/gaps")).toBe(200);
    expect(await status("/overview/runbook/IdemDuplicateSurge?x=1")).toBe(200);
  });

  it("ignores ?tenant= for a tenant session, as its pages do", async () => {
    expect(await status("/overview?tenant=a%00b", { tenantId: "acme" })).toBe(200);
    expect(await status("/gaps?tenant=a%00b", { tenantId: "acme" })).toBe(200);
  });
});

describe("invalidPageQuery: what a page shows beside its form for a URL it refuses", () => {
  it("keeps the values as typed, and the API's message and code", () => {
    let refused: unknown;
    try {
      parseKeysPageQuery(q("q=ord-1&status=bogus"), { tenantId: null });
    } catch (error) {
      refused = error;
    }
    const invalid = invalidPageQuery(q("q=ord-1&status=bogus"), refused);
    expect(invalid.typed).toEqual({ q: "ord-1", status: "bogus" });
    expect(invalid.code).toBe("INVALID_INPUT");
    expect(invalid.message).toMatch(/^invalid query: status/);
  });

  it("throws anything else on: a failed read is not the link's fault", () => {
    const down = new ApiError("DATABASE_UNAVAILABLE", "the database did not answer");
    expect(() => invalidPageQuery(q("q=a"), down)).toThrow(down);
    expect(() => invalidPageQuery(q("q=a"), new Error("boom"))).toThrow("boom");
  });
});
