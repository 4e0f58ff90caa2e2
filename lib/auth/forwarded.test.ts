import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config";
import { announcePeerHeader, clientIpOf, consoleOrigin, PEER_HEADER, requestHost, requestScheme } from "./client-ip";
import { csrfProblem } from "./csrf";
import { addressKey } from "./rate-limit";
import { safeNextPath } from "./safe-next";
import { securityHeadersFor } from "./security-headers";

/**
 * What a request may claim about itself: X-Forwarded-* only from TRUSTED_PROXIES, the CSRF check on
 * the full origin, next= only to a plain path of the console, HSTS only over https.
 */
const UNTRUSTED_PEER = "203.0.113.9";
const PROXY_PEER = "10.1.2.3";

beforeAll(() => announcePeerHeader());
afterEach(() => {
  delete process.env.TRUSTED_PROXIES;
  delete process.env.PUBLIC_URL;
  delete process.env.ONCEBOARD_HSTS_MAX_AGE;
});

const headers = (values: Record<string, string>) => new Headers(values);

describe("trusted proxies", () => {
  const forged = {
    "x-forwarded-for": "6.6.6.6, 198.51.100.7",
    "x-real-ip": "6.6.6.7",
    "x-forwarded-host": "evil.example",
    "x-forwarded-proto": "https",
    host: "console.test:3000",
  };

  it("from an untrusted peer, X-Forwarded-For/-Host/-Proto and X-Real-IP are ignored", () => {
    const h = headers({ ...forged, [PEER_HEADER]: UNTRUSTED_PEER });
    expect(clientIpOf(h)).toBe(UNTRUSTED_PEER);
    expect(requestHost(h)).toBe("console.test:3000");
    expect(requestScheme(h)).toBe("http");
    expect(consoleOrigin(h)).toBe("http://console.test:3000");
    // Even when TRUSTED_PROXIES names other addresses.
    process.env.TRUSTED_PROXIES = "10.0.0.0/8";
    expect(clientIpOf(h)).toBe(UNTRUSTED_PEER);
  });

  it("with no peer known (no console server in front), nothing forwarded is believed", () => {
    process.env.TRUSTED_PROXIES = "0.0.0.0/0, ::/0";
    const h = headers(forged);
    expect(clientIpOf(h)).toBeNull();
    expect(requestHost(h)).toBe("console.test:3000");
    expect(requestScheme(h)).toBe("http");
  });

  it("from a trusted proxy: the right-most untrusted X-Forwarded-For entry, its host and scheme", () => {
    process.env.TRUSTED_PROXIES = "10.0.0.0/8, 2001:db8::/32";
    const h = headers({ ...forged, "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.0.0.5", [PEER_HEADER]: PROXY_PEER });
    expect(clientIpOf(h)).toBe("198.51.100.7");
    expect(requestHost(h)).toBe("evil.example");
    expect(requestScheme(h)).toBe("https");
    expect(consoleOrigin(h)).toBe("https://evil.example");
    // An IPv4 peer on a dual-stack socket, and an IPv6 proxy.
    expect(clientIpOf(headers({ "x-forwarded-for": "198.51.100.8", [PEER_HEADER]: `::ffff:${PROXY_PEER}` }))).toBe(
      "198.51.100.8",
    );
    expect(clientIpOf(headers({ "x-forwarded-for": "2001:db9::1", [PEER_HEADER]: "2001:db8::7" }))).toBe("2001:db9::1");
    expect(clientIpOf(headers({ "x-real-ip": "198.51.100.9", [PEER_HEADER]: PROXY_PEER }))).toBe("198.51.100.9");
  });

  it("TRUSTED_PROXIES: a bad entry is named", () => {
    expect(loadConfig({ TRUSTED_PROXIES: "10.0.0.1, ::1, 10.0.0.0/8, fd00::/8" }).TRUSTED_PROXIES).toHaveLength(4);
    expect(() => loadConfig({ TRUSTED_PROXIES: "10.0.0.1, proxy.local" })).toThrow(/TRUSTED_PROXIES.*"proxy\.local"/);
    expect(() => loadConfig({ TRUSTED_PROXIES: "10.0.0.0/33" })).toThrow(/TRUSTED_PROXIES/);
  });
});

describe("rate-limit keys", () => {
  it("count an IPv4 address alone, an IPv6 address by its /64", () => {
    expect(addressKey("198.51.100.7")).toBe("198.51.100.7");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey(null)).toBe("unknown");
  });
});

describe("CSRF on the full origin", () => {
  const post = (values: Record<string, string>) =>
    new Request("http://127.0.0.1:3500/api/v1/effects/k/release", {
      method: "POST",
      headers: { host: "127.0.0.1:3500", [PEER_HEADER]: UNTRUSTED_PEER, ...values },
    });

  it.each([
    ["another scheme", { origin: "https://127.0.0.1:3500" }],
    ["a non-http scheme", { origin: "ftp://127.0.0.1:3500" }],
    ["another port", { origin: "http://127.0.0.1:3501" }],
    ["another host", { origin: "http://evil.example" }],
    [
      "another host, X-Forwarded-Host agreeing, from an untrusted peer",
      { origin: "http://evil.example", "x-forwarded-host": "evil.example" },
    ],
    ["Sec-Fetch-Site: none and no Origin", { "sec-fetch-site": "none" }],
    ["Sec-Fetch-Site: same-site", { "sec-fetch-site": "same-site" }],
    ["Sec-Fetch-Site: cross-site with a matching Origin", { "sec-fetch-site": "cross-site", origin: "http://127.0.0.1:3500" }],
    ["neither Origin nor Sec-Fetch-Site", {}],
    ["Origin: null without Sec-Fetch-Site: same-origin", { origin: "null" }],
    ["a malformed Origin", { origin: "http://[" }],
  ])("a cookie write with %s is refused", (_name, values) => {
    expect(csrfProblem(post(values), "session")).not.toBeNull();
  });

  it("a cookie write with the console's Origin, or Sec-Fetch-Site: same-origin, passes", () => {
    expect(csrfProblem(post({ origin: "http://127.0.0.1:3500" }), "session")).toBeNull();
    expect(csrfProblem(post({ "sec-fetch-site": "same-origin" }), "session")).toBeNull();
    expect(csrfProblem(post({ origin: "null", "sec-fetch-site": "same-origin" }), "session")).toBeNull();
  });

  it("PUBLIC_URL is the console's origin when set", () => {
    process.env.PUBLIC_URL = "https://onceboard.example.com";
    expect(csrfProblem(post({ origin: "https://onceboard.example.com" }), "session")).toBeNull();
    expect(csrfProblem(post({ origin: "http://127.0.0.1:3500" }), "session")).not.toBeNull();
    expect(csrfProblem(post({ origin: "http://onceboard.example.com" }), "session")).not.toBeNull();
  });

  it("behind a trusted proxy, its X-Forwarded-Host and -Proto make the origin", () => {
    process.env.TRUSTED_PROXIES = PROXY_PEER;
    const behind = (origin: string) =>
      post({
        origin,
        [PEER_HEADER]: PROXY_PEER,
        "x-forwarded-host": "onceboard.example.com",
        "x-forwarded-proto": "https",
      });
    expect(csrfProblem(behind("https://onceboard.example.com"), "session")).toBeNull();
    expect(csrfProblem(behind("http://127.0.0.1:3500"), "session")).not.toBeNull();
  });

  it("a Bearer write needs no browser headers, but one that sends a foreign Origin is refused", () => {
    expect(csrfProblem(post({}), "bearer")).toBeNull();
    expect(csrfProblem(post({ "sec-fetch-site": "none" }), "bearer")).toBeNull();
    expect(csrfProblem(post({ origin: "http://evil.example" }), "bearer")).not.toBeNull();
  });
});

describe("next= after sign-in", () => {
  it.each([
    "//evil.example",
    "/\\evil.example",
    "/\\/evil.example",
    "/path\\..\\evil",
    "/%5Cevil.example",
    "/%5cevil.example",
    "/%2F%2Fevil.example",
    "/%2F/evil.example",
    "/%252F%252Fevil.example",
    "/%255Cevil.example",
    "/%25252F%25252Fevil.example",
    "/\tevil",
    "/\t/evil.example",
    "/%09/evil.example",
    "/%0d%0aSet-Cookie:x=1",
    "/\u0000",
    "https://evil.example/",
    "http:evil.example",
    "javascript:alert(1)",
    "evil.example",
    "",
    "/%E0%A4%A",
    "/login",
    "/login?next=/overview",
  ])("refuses %j", (next) => {
    expect(safeNextPath(next)).toBeNull();
  });

  it.each(["/overview", "/overview?window=7d", "/keys?key=a%20b", "/effects/capture%3Aord-1", "/audit#top"])(
    "keeps %j",
    (next) => {
      expect(safeNextPath(next)).toBe(next);
    },
  );
});

describe("HSTS", () => {
  it("only when served over https: PUBLIC_URL, or X-Forwarded-Proto from a trusted proxy", () => {
    const hsts = (values: Record<string, string>) => securityHeadersFor(headers(values))["strict-transport-security"];
    expect(hsts({ host: "c", [PEER_HEADER]: UNTRUSTED_PEER })).toBeUndefined();
    expect(hsts({ host: "c", "x-forwarded-proto": "https", [PEER_HEADER]: UNTRUSTED_PEER })).toBeUndefined();
    process.env.TRUSTED_PROXIES = PROXY_PEER;
    expect(hsts({ host: "c", "x-forwarded-proto": "https", [PEER_HEADER]: PROXY_PEER })).toBe(
      "max-age=31536000; includeSubDomains",
    );
    delete process.env.TRUSTED_PROXIES;
    process.env.PUBLIC_URL = "https://onceboard.example.com";
    expect(hsts({ host: "c" })).toBe("max-age=31536000; includeSubDomains");
    process.env.ONCEBOARD_HSTS_MAX_AGE = "600";
    expect(hsts({ host: "c" })).toBe("max-age=600; includeSubDomains");
    process.env.ONCEBOARD_HSTS_MAX_AGE = "0";
    expect(hsts({ host: "c" })).toBeUndefined();
  });
});
