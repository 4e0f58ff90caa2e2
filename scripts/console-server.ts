import http from "node:http";
import path from "node:path";
import { PAGE_STATUS_HEADER } from "../lib/api/page-status";
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
/**
 * The second thing `next start` cannot do: answer a page whose URL is invalid with its 4xx. The
 * proxy (proxy.ts, from lib/routes/page-queries.ts) marks such a response with PAGE_STATUS_HEADER;
 * a page cannot set a status itself (its shell streams before it runs) and Next 16.4.6 answers a
 * proxy rewrite with a status as a 500. So the status is applied here as the head is written —
 * Node writes every head, implicit ones included, through writeHead — and only over a 200: a
 * redirect, a 404 or a 500 Next chose stays what it is. The marker never reaches the client.
 */
function answerWithPageStatus(request: http.IncomingMessage, response: http.ServerResponse): void {
  // A client-side navigation's RSC fetch keeps its 200, so the router renders the page (its error
  // beside the form) in place. Only here is that known: Next hides the RSC headers from the proxy.
  const navigation = request.headers.rsc === "1";
  const writeHead = response.writeHead;
  response.writeHead = function (this: http.ServerResponse, ...args: unknown[]) {
    const marked = Number(this.getHeader(PAGE_STATUS_HEADER));
    this.removeHeader(PAGE_STATUS_HEADER);
    const status = typeof args[0] === "number" ? args[0] : this.statusCode;
    if (!navigation && status === 200 && marked >= 400 && marked < 500) {
      if (typeof args[0] === "number") args[0] = marked;
      else this.statusCode = marked;
      this.statusCode = marked;
    }
    return (writeHead as (...a: unknown[]) => http.ServerResponse).apply(this, args);
  } as typeof response.writeHead;
}

/** The flag that makes an unhandled rejection fatal (the server tier runs the console with it). */
const STRICT_REJECTIONS_FLAG = "--unhandled-rejections=strict";

/**
 * Under --unhandled-rejections=strict (on the command line or in NODE_OPTIONS), an unhandled
 * rejection ends the console, as Node means the flag. Next.js logs uncaught exceptions and
 * rejections and carries on, so the flag alone changes nothing here; this listener runs before
 * Next's (prepended) and exits. Without the flag Next's logging is what a user gets.
 */
function failOnUnhandledRejectionWhenStrict(): void {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
  if (!flags.includes(STRICT_REJECTIONS_FLAG)) return;
  process.prependListener("uncaughtException", (error, origin) => {
    if (origin !== "unhandledRejection") return;
    process.stderr.write(
      `onceboard: unhandled rejection, fatal under ${STRICT_REJECTIONS_FLAG}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(70);
  });
}

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
failOnUnhandledRejectionWhenStrict();
announcePeerHeader();

const server = http.createServer((request, response) => {
  request.headers[PEER_HEADER] = request.socket.remoteAddress ?? "";
  // The key lookup and search, without Next.js's router (lib/routes/direct-api.ts, installed by instrumentation-node.ts).
  if (globalThis.__onceboardDirectApi?.(request, response)) return;
  answerWithPageStatus(request, response);
  void handle(request, response);
});
server.on("error", (error) => {
  console.error(`the console server could not listen on ${hostname}:${port}: ${error.message}`);
  process.exit(1);
});
server.listen(port, hostname);
