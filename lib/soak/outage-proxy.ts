import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * A plain TCP proxy between the soak's processes and a database server it must not restart (the
 * machine's shared MariaDB): `outage()` does to the soak what a server restart does, and to nobody
 * else. Every connection it carries is cut on both sides at once (the server sees its client go and
 * rolls back whatever transaction was open; the client sees its server go), and for `downMs`
 * every new connection is closed as soon as it is accepted, before the server's greeting, as a
 * server that is down would close it; then connections reach the server again. It reads nothing of
 * the protocol (the PostgreSQL fault proxy, fault-proxy.ts, is the one that does).
 */
export interface OutageProxy {
  host: string;
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  /** Connections carried so far, and refused while down. */
  readonly counts: { connections: number; refused: number };
  /** Cuts every connection, refuses new ones for `downMs`, then lets them through again. */
  outage(downMs: number): Promise<{ cut: number; refused: number }>;
  close(): Promise<void>;
}

export async function startOutageProxy(target: { host: string; port: number }): Promise<OutageProxy> {
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  const counts = { connections: 0, refused: 0 };
  let down = false;
  const listener = net.createServer((client) => {
    client.on("error", () => {});
    if (down) {
      counts.refused++;
      client.destroy();
      return;
    }
    counts.connections++;
    const server = net.connect(target);
    server.on("error", () => {});
    const pair = { client, server };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on("close", end);
    server.on("close", end);
    client.pipe(server);
    server.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = listener.address() as net.AddressInfo;
  return {
    host: "127.0.0.1",
    port,
    urlFor(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    counts,
    async outage(downMs) {
      down = true;
      const refusedBefore = counts.refused;
      const cut = pairs.size;
      for (const pair of [...pairs]) {
        pair.client.destroy();
        pair.server.destroy();
      }
      pairs.clear();
      await sleep(downMs);
      down = false;
      return { cut, refused: counts.refused - refusedBefore };
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
