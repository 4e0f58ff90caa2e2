import http from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { MAILER_MAPPING } from "../demo/providers-file";
import { createEffects } from "../idempotency";
import { HttpJsonAdapter } from "./http-json";
import { reconcile } from "./reconcile";
import { demoProvider, FAST_RETRY } from "./testing/harness";

interface Message {
  id: string;
  onceboard_key: string | null;
  onceboard_tenant: string | null;
  sent_at: string;
}

let db: TestDatabase;
let server: http.Server;
let base: string;
const received: Message[] = [];
let answer: "ok" | "malformed" | "unauthorized" = "ok";

beforeAll(async () => {
  db = await createTestDatabase();
  // A mailer's list endpoint: what it received, oldest first, two to a page.
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://mailer");
    if (answer === "unauthorized") return res.writeHead(401).end();
    if (answer === "malformed") return res.writeHead(200, { "content-type": "application/json" }).end("{not json");
    const from = Date.parse(url.searchParams.get("created_gte") ?? "");
    const to = Date.parse(url.searchParams.get("created_lt") ?? "");
    const start = Number(url.searchParams.get("cursor") ?? "0");
    const limit = Number(url.searchParams.get("limit"));
    const inWindow = received.filter((m) => Date.parse(m.sent_at) >= from && Date.parse(m.sent_at) < to);
    const page = inWindow.slice(start, start + limit);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ messages: page, next_cursor: start + limit < inWindow.length ? String(start + limit) : null }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mailer/messages`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await db.drop();
});

const mailer = demoProvider("mailer", { mailerUrl: "http://x" }, { STRIPE_API_KEY: undefined });
const window = () => ({ from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) });

describe("the generic HTTP+JSON adapter, as the demo's mailer is read", () => {
  it("says which at-most-once sends, claimed and abandoned, the mailer never received", async () => {
    const effects = createEffects({ db: db.pool, logger: pino({ level: "silent" }), flushInterval: 0, register: false });
    for (const order of ["o-1", "o-2", "o-3"]) {
      await effects.once({ tenant: "acme", key: `receipt:${order}`, jobType: "order.receipt", policy: "atMostOnce" }, (claim) => {
        // o-2's send is claimed and then lost on the way: the mailer never sees it.
        if (order !== "o-2")
          received.push({
            id: `m-${order}`,
            onceboard_key: claim.key,
            onceboard_tenant: claim.tenant,
            sent_at: new Date().toISOString(),
          });
        return { sent: true };
      });
    }
    await effects.close();
    // And one message that no effect sent.
    received.push({ id: "m-legacy", onceboard_key: "receipt:o-9", onceboard_tenant: "acme", sent_at: new Date().toISOString() });
    const adapter = new HttpJsonAdapter("mailer", base, MAILER_MAPPING, { pageLimit: 2, retry: FAST_RETRY });
    const result = await reconcile({
      pool: db.pool,
      adapter,
      provider: mailer,
      window: window(),
      graceSeconds: 0,
      trigger: "manual",
    });
    expect(result).toMatchObject({ status: "completed", matched: 2, objectsSeen: 3 });
    expect(result.counts).toMatchObject({ missing_at_provider: 1, unknown_to_onceboard: 1 });
    const { rows } = await db.pool.query("SELECT kind, effect_key, detail FROM reconciliation_findings ORDER BY kind");
    expect(rows).toEqual([
      {
        kind: "missing_at_provider",
        effect_key: "receipt:o-2",
        detail: "receipt:o-2 is completed here, but no message carries it",
      },
      {
        kind: "unknown_to_onceboard",
        effect_key: "receipt:o-9",
        detail: "m-legacy carries receipt:o-9, which has no effect here",
      },
    ]);
  });

  it("fails the run on malformed JSON and on refused credentials", async () => {
    const adapter = new HttpJsonAdapter("mailer", base, MAILER_MAPPING, { retry: FAST_RETRY });
    for (const [mode, reason] of [
      ["malformed", /malformed JSON/],
      ["unauthorized", /refused the credentials \(401\)/],
    ] as const) {
      answer = mode;
      const w = { from: new Date(Date.UTC(2026, 0, 1)), to: new Date(Date.UTC(2026, 0, 2)) };
      const result = await reconcile({ pool: db.pool, adapter, provider: mailer, window: w, graceSeconds: 0, trigger: "manual" });
      expect(result.status).toBe("failed");
      expect(result.error).toMatch(reason);
    }
    answer = "ok";
  });
});
