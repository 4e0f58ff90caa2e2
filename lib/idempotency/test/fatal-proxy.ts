import net from "node:net";

/**
 * A TCP proxy on loopback between node-postgres and PostgreSQL that can make the server's FATAL
 * arrive in the same socket read as a reply: armed, it holds back the next server chunk that ends
 * with ReadyForQuery until `release()`, then writes that chunk and an ErrorResponse
 * (FATAL 57P01 admin_shutdown, what pg_terminate_backend sends) as ONE write, and closes the
 * connection. Connections made after that pass through untouched.
 */
export interface FatalProxy {
  port: number;
  /** Hold the next reply; resolves when it has been held (the query is answered, the client not yet told). */
  arm(): Promise<void>;
  /** Send the held reply with the FATAL right behind it, then cut the connection. */
  release(): void;
  connections(): number;
  close(): Promise<void>;
}

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.concat([Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0`, "utf8"), Buffer.from([0])]);
  const header = Buffer.alloc(5);
  header.write("E", 0, "ascii");
  header.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
}

const endsWithReadyForQuery = (chunk: Buffer) =>
  chunk.length >= 6 && chunk[chunk.length - 6] === 0x5a && chunk.readInt32BE(chunk.length - 5) === 5;

export async function startFatalProxy(target: { host: string; port: number }): Promise<FatalProxy> {
  const sockets = new Set<net.Socket>();
  let armed: { held: (() => void) | null; onHeld: () => void } | null = null;
  let count = 0;
  const server = net.createServer((client) => {
    count++;
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.on("data", (chunk) => upstream.write(chunk));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    upstream.on("data", (chunk: Buffer) => {
      const trap = armed;
      if (!trap || trap.held || !endsWithReadyForQuery(chunk)) {
        client.write(chunk);
        return;
      }
      upstream.pause();
      trap.held = () => {
        client.write(Buffer.concat([chunk, errorResponse("57P01", "terminating connection due to administrator command")]));
        upstream.destroy();
        client.end();
      };
      trap.onHeld();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    arm: () =>
      new Promise<void>((resolve) => {
        armed = { held: null, onHeld: resolve };
      }),
    release() {
      const trap = armed;
      armed = null;
      trap?.held?.();
    },
    connections: () => count,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
