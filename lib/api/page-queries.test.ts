import { describe, expect, it } from "vitest";
import { lastValues, pageQueryError, parseKeysPageQuery } from "./page-queries";

const q = (text: string) => new URLSearchParams(text);

describe("page query strings, checked once for the page and for proxy.ts's status", () => {
  it("names what is wrong with a Keys or Overview URL, and lets a valid one through", () => {
    expect(pageQueryError("/keys", q("status=bogus"))?.message).toMatch(/^invalid query: status/);
    expect(pageQueryError("/keys", q(`q=${"x".repeat(300)}`))?.message).toMatch(/q/);
    expect(pageQueryError("/keys", q("q=ord-1&status=&jobType="))).toBeNull();
    expect(pageQueryError("/keys/", q("status=bogus"))).not.toBeNull();
    expect(pageQueryError("/overview", q("window=zzz"))?.message).toMatch(/window/);
    expect(pageQueryError("/overview", q("window=24h&jobType=&tenant="))).toBeNull();
    // Pages without a query of their own are never refused here.
    expect(pageQueryError("/workers", q("window=zzz"))).toBeNull();
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
