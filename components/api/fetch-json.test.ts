import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClientError, fetchJson, postJson } from "./fetch-json";

/** A real server that records each request and answers as the console's API does. */
let server: http.Server;
let base: string;
const seen: Array<{ method?: string; type?: string; body: string }> = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      seen.push({ method: request.method, type: request.headers["content-type"], body });
      response.setHeader("content-type", "application/json");
      if (request.url === "/conflict") {
        response.statusCode = 409;
        response.end(JSON.stringify({ error: { code: "NOT_STUCK", message: "the claim is not stuck" } }));
      } else if (request.url === "/bare") {
        response.statusCode = 503;
        response.end("not json");
      } else response.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("postJson", () => {
  it("POSTs without a body, or with a JSON one, and returns the answer", async () => {
    await expect(postJson(`${base}/ok`)).resolves.toEqual({ ok: true });
    await expect(postJson(`${base}/ok`, { retentionDays: 7 }, { method: "PUT" })).resolves.toEqual({ ok: true });
    expect(seen.slice(-2)).toEqual([
      { method: "POST", type: undefined, body: "" },
      { method: "PUT", type: "application/json", body: '{"retentionDays":7}' },
    ]);
  });

  it("throws the server's error code and message, as fetchJson does", async () => {
    for (const call of [() => postJson(`${base}/conflict`), () => fetchJson(`${base}/conflict`)]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiClientError);
      expect(error).toMatchObject({ status: 409, code: "NOT_STUCK", message: "the claim is not stuck" });
    }
  });

  it("names the status when the answer is not the API's JSON, and a network failure as NETWORK", async () => {
    await expect(postJson(`${base}/bare`)).rejects.toMatchObject({ status: 503, code: "HTTP_503" });
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(postJson(`http://127.0.0.1:${port}/`)).rejects.toMatchObject({ status: 0, code: "NETWORK" });
  });
});
