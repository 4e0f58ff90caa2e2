import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { describe, expect, inject, it } from "vitest";
import { createScratchDatabase } from "./scratch";

/**
 * A loopback proxy to PostgreSQL whose client-to-server bytes (and end) are held back `delayMs` once
 * `slow` is set: a pool's Terminate then reaches the server after its end() has resolved, as it
 * does when the server is busy. Server-to-client bytes pass at once.
 */
async function slowClosingProxy(target: URL, delayMs: number) {
  const sockets = new Set<net.Socket>();
  const state = { slow: false };
  // Half-open: a client that has sent its Terminate and ended its side still hears the server.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    const later = (fn: () => void) => (state.slow ? setTimeout(fn, delayMs) : fn());
    client.on("data", (chunk) => later(() => upstream.write(chunk)));
    client.on("end", () => later(() => upstream.end()));
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    state,
    urlFor(url: string) {
      const via = new URL(url);
      via.hostname = "127.0.0.1";
      via.port = String(port);
      return via.toString();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("a scratch database's drop", () => {
  it("lets the connections of a pool that just ended close before it cuts what is left: no FATAL reaches them", async () => {
    const adminUrl = inject("adminDatabaseUrl");
    const scratch = await createScratchDatabase(adminUrl, { prefix: "onceboard_drop_test" });
    const proxy = await slowClosingProxy(new URL(scratch.url), 200);
    const pool = new pg.Pool({ connectionString: proxy.urlFor(scratch.url), max: 4 });
    // What a pool without a listener would have thrown as an uncaught exception.
    const errors: string[] = [];
    pool.on("error", (error) => errors.push(error.message));
    try {
      const clients = await Promise.all(Array.from({ length: 4 }, () => pool.connect()));
      for (const client of clients) client.release();
      proxy.state.slow = true;
      await pool.end();
      await scratch.drop();
      // Any FATAL the drop sent would have arrived by now (replies are not delayed).
      await sleep(300);
      expect(errors).toEqual([]);
      const admin = new pg.Client(adminUrl);
      await admin.connect();
      try {
        const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [scratch.name]);
        expect(rowCount).toBe(0);
      } finally {
        await admin.end();
      }
    } finally {
      await proxy.close();
    }
  });
});
