import net from "node:net";
import { describe, expect, it } from "vitest";
import { findClosedPort } from "./free-port";

describe("findClosedPort", () => {
  it("names a port below the kernel's ephemeral range that refuses connections", async () => {
    const port = await findClosedPort();
    expect(port).toBeGreaterThanOrEqual(20000);
    expect(port).toBeLessThan(32768);
    const refused = await new Promise<string>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve("connected");
      });
      socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
    });
    expect(refused).toBe("ECONNREFUSED");
  });
});
