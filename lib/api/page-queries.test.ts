import { describe, expect, it } from "vitest";
import { lastValues, parseKeysPageQuery } from "./page-queries";

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
