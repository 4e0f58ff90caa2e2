import net from "node:net";

/** A loopback port nobody listens on right now, chosen by the kernel. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The lowest port the kernel hands out to a bind to port 0, on Linux (32768–60999) and macOS
 * (49152–65535) alike.
 */
const EPHEMERAL_PORTS_FROM = 32768;

/**
 * A loopback port nobody listens on, for an address that must stay unreachable ("connection
 * refused") while other servers start. Chosen below the ephemeral range: a port from
 * findFreePort() is free only until the next bind to port 0, which may be handed the very port
 * just released (CI, 2026-12-03: a test's "down" worker answered HTTP 404 from a server started
 * after it was chosen).
 */
export async function findClosedPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20000 + Math.floor(Math.random() * (EPHEMERAL_PORTS_FROM - 20000));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port between 20000 and ${EPHEMERAL_PORTS_FROM} after 50 tries`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Resolves when `port` can be bound on all interfaces; rejects with a clear message when taken. */
export function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", (error: NodeJS.ErrnoException) => {
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `port ${port} is already in use: stop what listens there or set PORT to another port`
            : `cannot listen on port ${port}: ${error.message}`,
        ),
      );
    });
    server.listen(port, () => server.close(() => resolve()));
  });
}
