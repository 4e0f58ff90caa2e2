import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OutageProxy, startOutageProxy } from "./outage-proxy";

/** An echo server: what the proxy carries is the bytes both ways, nothing else. */
let echo: net.Server;
let serverSide: Set<net.Socket>;
let proxy: OutageProxy;

beforeAll(async () => {
  serverSide = new Set();
  echo = net.createServer((socket) => {
    serverSide.add(socket);
    socket.on("close", () => serverSide.delete(socket));
    socket.on("error", () => {});
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  proxy = await startOutageProxy({ host: "127.0.0.1", port: (echo.address() as net.AddressInfo).port });
});

afterAll(async () => {
  await proxy.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

function connect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: proxy.host, port: proxy.port }, () => resolve(socket));
    socket.once("error", reject);
  });
}

function roundTrip(socket: net.Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    socket.once("data", (chunk) => resolve(chunk.toString()));
    socket.write(text);
  });
}

const closed = (socket: net.Socket) =>
  new Promise<void>((resolve) => {
    if (socket.destroyed) resolve();
    else socket.once("close", () => resolve());
  });

describe("the soak's outage proxy (a server restart the soak may simulate but not do)", () => {
  it("carries bytes both ways; an outage cuts every connection on both sides and refuses new ones until it ends", async () => {
    const a = await connect();
    const b = await connect();
    expect(await roundTrip(a, "hello")).toBe("hello");
    expect(await roundTrip(b, "world")).toBe("world");
    await expect.poll(() => serverSide.size).toBe(2);

    const outage = proxy.outage(1000);
    // Both clients lose their connection, and the server sees both of its clients go.
    await Promise.all([closed(a), closed(b)]);
    await expect.poll(() => serverSide.size).toBe(0);
    // While down: a new connection is accepted and closed at once, before any byte of the server.
    const refused = await connect();
    const received: Buffer[] = [];
    refused.on("data", (chunk) => received.push(chunk));
    refused.on("error", () => {});
    await closed(refused);
    expect(received).toEqual([]);
    const report = await outage;
    expect(report).toEqual({ cut: 2, refused: 1 });

    // Up again: connections reach the server.
    const c = await connect();
    expect(await roundTrip(c, "again")).toBe("again");
    c.destroy();
    expect(proxy.counts.refused).toBe(1);
    expect(proxy.counts.connections).toBe(3);
  });
});
