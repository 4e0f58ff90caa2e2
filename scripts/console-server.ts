import http from "node:http";
import path from "node:path";
import { announcePeerHeader, PEER_HEADER } from "../lib/auth/client-ip";

/**
 * The built console's HTTP server: what `next start` does, plus one thing it cannot. Next.js tells
 * a proxy or route handler nothing about the TCP peer (it fills X-Forwarded-For only when the
 * client sent none), so without this no one could tell a reverse proxy from a client forging its
 * headers. Here every request's peer address is written into PEER_HEADER, replacing any copy the
 * client sent, and lib/auth/client-ip.ts believes that header only in a process that says so.
 *
 *   node --import tsx scripts/console-server.ts -H 127.0.0.1 -p 3000
 */
function option(flag: string, fallback: string): string {
  const index = process.argv.indexOf(flag);
  return index >= 0 && process.argv[index + 1] ? (process.argv[index + 1] as string) : fallback;
}

const hostname = option("-H", "127.0.0.1");
const port = Number(option("-p", "3000"));
const dir = path.resolve(import.meta.dirname, "..");

// As `next start` does, before Next.js (and React) are loaded.
Object.assign(process.env, { NODE_ENV: "production" });
const { default: next } = await import("next");
const app = next({ dev: false, dir, hostname, port });
const handle = app.getRequestHandler();
await app.prepare();
announcePeerHeader();

const server = http.createServer((request, response) => {
  request.headers[PEER_HEADER] = request.socket.remoteAddress ?? "";
  void handle(request, response);
});
server.on("error", (error) => {
  console.error(`the console server could not listen on ${hostname}:${port}: ${error.message}`);
  process.exit(1);
});
server.listen(port, hostname);
