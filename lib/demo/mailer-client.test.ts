import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EffectNotAppliedError } from "../idempotency";
import { MailerClient } from "./mailer-server";

/** A stand-in mailer that answers each POST with the next scripted reply and counts its connections. */
async function scriptedMailer(replies: ((res: http.ServerResponse) => void)[]) {
  let connections = 0;
  const bodies: unknown[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      const reply = replies.shift();
      if (!reply) throw new Error("no scripted reply left");
      reply(res);
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mailer/messages`,
    bodies,
    connections: () => connections,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const json = (status: number, body: unknown) => (res: http.ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};
const message = { to: "billing@acme.example", subject: "Receipt", onceboard_key: "receipt:1", onceboard_tenant: "acme" };
const stored = { id: "msg_1", ...message, sent_at: "2026-12-02T00:00:00.000Z" };

describe("MailerClient", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  const start = async (replies: ((res: http.ServerResponse) => void)[]) => {
    const mailer = await scriptedMailer(replies);
    const client = new MailerClient(mailer.url);
    cleanups.push(
      () => client.close(),
      () => mailer.close(),
    );
    return { mailer, client };
  };

  it("posts the message as JSON and returns what the mailer stored, over one kept-alive connection", async () => {
    const { mailer, client } = await start([json(201, stored), json(201, { ...stored, id: "msg_2" })]);
    expect(await client.send(message)).toEqual(stored);
    expect((await client.send(message)).id).toBe("msg_2");
    expect(mailer.bodies).toEqual([message, message]);
    expect(mailer.connections()).toBe(1);
  });

  it("a 4xx is a refusal (EffectNotAppliedError: nothing was stored, the step may retry)", async () => {
    const { client } = await start([json(400, { error: "to is required", field: "to" })]);
    const error = await client.send(message).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EffectNotAppliedError);
    expect((error as Error).message).toMatch(/refused the message \(400\)/);
  });

  it("a 5xx, or a connection cut before the reply, is a plain Error (the message may have been stored)", async () => {
    const { client } = await start([json(500, { error: "boom" }), (res) => res.socket?.destroy()]);
    for (const expected of [/the mailer failed \(500\)/, /socket hang up|ECONNRESET|closed before/]) {
      const error = await client.send(message).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(EffectNotAppliedError);
      expect((error as Error).message).toMatch(expected);
    }
  });
});
