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
