import net from "node:net";

/**
 * A TCP proxy between a PostgreSQL client and its server that injects the faults an idempotency
 * layer must survive (docs/soak.md, *The fault proxy*). It reads just enough of the PostgreSQL
 * wire protocol (v3) to know, per connection:
 * - where one request ends: a simple Query ('Q') or an extended-protocol batch closed by Sync
 *   ('S'); its reply ends with the server's ReadyForQuery ('Z');
 * - the request's statement text (from Query, from Parse, or from the prepared statement a Bind
 *   names), so it recognises a COMMIT, the library's one-statement claim and its completion;
 * - the transaction status each ReadyForQuery carries (I idle, T in a block, E failed block).
 *
 * The faults, by request:
 * - reply_lost: a commit point (a COMMIT, or the claim / completion in autocommit) is forwarded,
 *   the server's whole reply is swallowed up to its ReadyForQuery (so the server has committed),
 *   and then the connection is reset: the client cannot know that its commit happened;
 * - reset_in_transaction: a request sent while the connection is inside a transaction block is
 *   not forwarded; the connection is reset instead (the server rolls the transaction back);
 * - stalled_reply: the reply is held for `stallMs` (set longer than the lease) and then delivered;
 * - delayed_packet: every chunk in either direction waits a random 0..latencyMaxMs (order kept).
 * Rates are per request (per chunk for latency); `arm()` injects one fault at the next request
 * that matches, deterministically, for tests.
 */

type FaultKind = "reply_lost" | "reset_in_transaction" | "stalled_reply" | "delayed_packet";

/** What a reply-lost fault cut: the explicit COMMIT, or the library's claim / completion in autocommit. */
type CommitPoint = "commit" | "claim" | "complete";

export interface FaultRates {
  /** Share of commit points whose reply is lost (0..1). */
  replyLost: number;
  /** Share of requests inside a transaction block that are replaced by a reset (0..1). */
  resetInTransaction: number;
  /** Share of requests whose reply is stalled for stallMs (0..1). */
  stall: number;
  /** How long a stalled reply is held. */
  stallMs: number;
  /** Upper bound of the random delay of every chunk, in ms (0: none). */
  latencyMaxMs: number;
}

const NO_FAULTS: FaultRates = { replyLost: 0, resetInTransaction: 0, stall: 0, stallMs: 0, latencyMaxMs: 0 };

export interface FaultCounts {
  /** Replies lost after a commit point, by what committed. */
  replyLost: Record<CommitPoint, number>;
  resetInTransaction: number;
  stalledReply: number;
  delayedPacket: number;
  /** Connections the proxy carried (accepted from clients). */
  connections: number;
}

/** A request as the proxy sees it when it decides on a fault. */
interface ProxiedRequest {
  /** The statement text, or null when the request carried none the proxy could name. */
  text: string | null;
  /** The commit point this request is, if any (a claim or completion only in autocommit). */
  commitPoint: CommitPoint | null;
  /** The connection's transaction status before the request: I, T or E. */
  transaction: "I" | "T" | "E";
}

export interface FaultProxy {
  host: string;
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  readonly counts: FaultCounts;
  setRates(rates: Partial<FaultRates>): void;
  /**
   * Injects `kind` once, at the next request `match` selects (default: the next request the fault
   * applies to: a commit point for reply_lost, any request for a stall); a reset only ever hits a
   * request inside a transaction block. Resolves with that request once the fault has happened.
   */
  arm(kind: Exclude<FaultKind, "delayed_packet">, match?: (request: ProxiedRequest) => boolean): Promise<ProxiedRequest>;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

// The library's statements, by their text (lib/idempotency/claim-sql.ts, complete-sql.ts): the
// schema is substituted, the function and column names are not.
const CLAIM_TEXT = /\bonceboard_claim(?:_batch)?\s*\(/;
const COMPLETE_TEXT = /^\s*UPDATE\s+\S+\.effects\b[\s\S]*\bstatus = 'completed'/;
const COMMIT_TEXT = /^\s*(?:COMMIT|END)\b/i;

export function commitPointOf(text: string | null, transaction: "I" | "T" | "E"): CommitPoint | null {
  if (text === null) return null;
  if (COMMIT_TEXT.test(text)) return transaction === "T" ? "commit" : null;
  if (transaction !== "I") return null;
  if (CLAIM_TEXT.test(text)) return "claim";
  if (COMPLETE_TEXT.test(text)) return "complete";
  return null;
}

function cstring(buf: Buffer, at: number): { value: string; next: number } {
  const end = buf.indexOf(0, at);
  if (end < 0) return { value: "", next: buf.length };
  return { value: buf.toString("utf8", at, end), next: end + 1 };
}

/**
 * The parts as one buffer: a view when they lie back to back in one allocation (a request or a
 * reply read in one chunk, the usual case), a copy only when they span chunks. Why: the proxy
 * carries every query of the soak, and copying each message and then the request cost it a
 * copy and an allocation per message.
 */
function joined(parts: Buffer[]): Buffer {
  const first = parts[0];
  if (!first) return Buffer.alloc(0);
  let end = first.byteOffset + first.length;
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.buffer !== first.buffer || part.byteOffset !== end) return Buffer.concat(parts);
    end += part.length;
  }
  return parts.length === 1 ? first : Buffer.from(first.buffer, first.byteOffset, end - first.byteOffset);
}

/** Writes chunks to a socket each after its delay, never out of order. */
class DelayedPipe {
  private queue: { buf: Buffer; at: number }[] = [];
  private last = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly dest: net.Socket) {}

  push(buf: Buffer, delayMs: number): void {
    const now = Date.now();
    const at = Math.max(this.last, now + delayMs);
    this.last = at;
    if (at <= now && this.queue.length === 0) {
      this.write(buf);
      return;
    }
    this.queue.push({ buf, at });
    this.schedule();
  }

  private write(buf: Buffer): void {
    if (!this.dest.destroyed) this.dest.write(buf);
  }

  private schedule(): void {
    if (this.timer || this.queue.length === 0) return;
    this.timer = setTimeout(() => this.pump(), Math.max(0, this.queue[0]!.at - Date.now()));
  }

  private pump(): void {
    this.timer = undefined;
    const now = Date.now();
    // Everything due goes out in one write (writev), not a syscall per chunk.
    this.dest.cork();
    while (this.queue.length > 0 && this.queue[0]!.at <= now) this.write(this.queue.shift()!.buf);
    this.dest.uncork();
    this.schedule();
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
  }
}

type Decision = "reply_lost" | "stalled_reply" | null;

/** A request forwarded and not yet answered by its ReadyForQuery. */
interface InFlight {
  decision: Decision;
  request: ProxiedRequest;
  /** The armed fault this request carries (tests), resolved once it has happened. */
  armed?: Armed;
  /** The stall began (its reply's first message arrived). */
  stalled?: boolean;
}

interface Armed {
  kind: Exclude<FaultKind, "delayed_packet">;
  match: (request: ProxiedRequest) => boolean;
  resolve: (request: ProxiedRequest) => void;
}

export async function startFaultProxy(options: {
  target: { host: string; port: number };
  rates?: Partial<FaultRates>;
  random?: () => number;
}): Promise<FaultProxy> {
  let rates: FaultRates = { ...NO_FAULTS, ...options.rates };
  const random = options.random ?? Math.random;
  const counts: FaultCounts = {
    replyLost: { commit: 0, claim: 0, complete: 0 },
    resetInTransaction: 0,
    stalledReply: 0,
    delayedPacket: 0,
    connections: 0,
  };
  const armed: Armed[] = [];
  const sockets = new Set<net.Socket>();

  const latency = () => {
    if (rates.latencyMaxMs <= 0) return 0;
    const ms = Math.floor(random() * (rates.latencyMaxMs + 1));
    if (ms > 0) counts.delayedPacket++;
    return ms;
  };

  /** Takes the armed fault this request triggers, if any. */
  const takeArmed = (request: ProxiedRequest): Armed | undefined => {
    const i = armed.findIndex((a) => (a.kind !== "reset_in_transaction" || request.transaction === "T") && a.match(request));
    return i < 0 ? undefined : armed.splice(i, 1)[0];
  };

  const serve = (client: net.Socket) => {
    counts.connections++;
    const server = net.connect(options.target.port, options.target.host);
    sockets.add(client);
    sockets.add(server);
    client.setNoDelay(true);
    server.setNoDelay(true);
    const toServer = new DelayedPipe(server);
    const toClient = new DelayedPipe(client);
    let closed = false;
    // Tears the connection down: the client sees a reset (ECONNRESET), the server an EOF.
    const teardown = () => {
      if (closed) return;
      closed = true;
      toServer.close();
      toClient.close();
      client.resetAndDestroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    client.on("error", teardown);
    server.on("error", teardown);
    client.on("close", teardown);
    server.on("close", teardown);

    let fromClient: Buffer = Buffer.alloc(0);
    let fromServer: Buffer = Buffer.alloc(0);
    let started = false;
    let transaction: "I" | "T" | "E" = "I";
    const prepared = new Map<string, string>();
    // The request being assembled (extended protocol, up to its Sync).
    let batch: Buffer[] = [];
    let batchText: string | null = null;
    // Requests forwarded and not yet answered by a ReadyForQuery, with their fault.
    const pending: InFlight[] = [];

    const endRequest = (text: string | null): boolean => {
      const request: ProxiedRequest = { text, commitPoint: commitPointOf(text, transaction), transaction };
      const chosen = takeArmed(request);
      let decision: FaultKind | null = chosen?.kind ?? null;
      if (!chosen) {
        if (transaction === "T" && rates.resetInTransaction > 0 && random() < rates.resetInTransaction) {
          decision = "reset_in_transaction";
        } else if (request.commitPoint && rates.replyLost > 0 && random() < rates.replyLost) {
          decision = "reply_lost";
        } else if (rates.stall > 0 && random() < rates.stall) {
          decision = "stalled_reply";
        }
      }
      if (decision === "reset_in_transaction") {
        counts.resetInTransaction++;
        chosen?.resolve(request);
        teardown();
        return false;
      }
      // An armed fault is resolved once it has happened (reply_lost: at the reset; stall: on delivery).
      pending.push({ decision: decision as Decision, request, armed: chosen });
      toServer.push(joined(batch), latency());
      batch = [];
      batchText = null;
      return true;
    };

    client.on("data", (chunk: Buffer) => {
      fromClient = fromClient.length === 0 ? chunk : Buffer.concat([fromClient, chunk]);
      for (;;) {
        if (closed) return;
        if (!started) {
          // Startup, SSL/GSS request or cancel request: length, then a code, no type byte.
          if (fromClient.length < 8) return;
          const length = fromClient.readInt32BE(0);
          if (fromClient.length < length) return;
          const message = fromClient.subarray(0, length);
          fromClient = fromClient.subarray(length);
          const code = message.readInt32BE(4);
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
            client.write("N"); // no encryption through the proxy: the client goes on in plain text
            continue;
          }
          started = true;
          toServer.push(message, latency());
          continue;
        }
        if (fromClient.length < 5) return;
        const length = fromClient.readInt32BE(1);
        if (fromClient.length < 1 + length) return;
        // A view into the chunk, never copied: a chunk is not reused once read.
        const message = fromClient.subarray(0, 1 + length);
        fromClient = fromClient.subarray(1 + length);
        const type = String.fromCharCode(message[0]!);
        switch (type) {
          case "Q":
            batch.push(message);
            if (!endRequest(cstring(message, 5).value)) return;
            break;
          case "P": {
            const name = cstring(message, 5);
            const text = cstring(message, name.next).value;
            prepared.set(name.value, text);
            batchText ??= text;
            batch.push(message);
            break;
          }
          case "B": {
            const portal = cstring(message, 5);
            const statement = cstring(message, portal.next).value;
            batchText ??= prepared.get(statement) ?? null;
            batch.push(message);
            break;
          }
          case "D":
          case "E":
          case "C":
            batch.push(message);
            break;
          case "S":
            batch.push(message);
            if (!endRequest(batchText)) return;
            break;
          case "H":
            // Flush: what was assembled goes out now; the request ends at its Sync.
            batch.push(message);
            toServer.push(joined(batch), latency());
            batch = [];
            break;
          default:
            // Authentication, Terminate, copy data: passed through as they come.
            toServer.push(message, latency());
        }
      }
    });

    server.on("data", (chunk: Buffer) => {
      fromServer = fromServer.length === 0 ? chunk : Buffer.concat([fromServer, chunk]);
      const out: Buffer[] = [];
      let stallFrom = -1;
      for (;;) {
        if (closed) return;
        if (fromServer.length < 5) break;
        const length = fromServer.readInt32BE(1);
        if (fromServer.length < 1 + length) break;
        const message = fromServer.subarray(0, 1 + length);
        fromServer = fromServer.subarray(1 + length);
        const head = pending[0];
        const isReady = message[0] === 0x5a; // 'Z'
        if (head?.decision === "reply_lost") {
          // Swallowed: once the server has answered in full (it committed), the connection dies.
          if (isReady) {
            counts.replyLost[head.request.commitPoint ?? "commit"]++;
            head.armed?.resolve(head.request);
            if (out.length > 0) toClient.push(joined(out), latency());
            teardown();
            return;
          }
          continue;
        }
        if (head?.decision === "stalled_reply" && !head.stalled) {
          head.stalled = true;
          counts.stalledReply++;
          if (stallFrom < 0) stallFrom = out.length;
        }
        out.push(message);
        if (isReady) {
          transaction = String.fromCharCode(message[5]!) as "I" | "T" | "E";
          const done = pending.shift();
          if (done?.decision === "stalled_reply" && done.armed) {
            const { armed: fault, request } = done;
            setTimeout(() => fault.resolve(request), rates.stallMs).unref();
          }
          // A stalled reply goes out on its own, after the stall; what follows it waits behind it.
          if (stallFrom >= 0) {
            if (stallFrom > 0) toClient.push(joined(out.slice(0, stallFrom)), latency());
            toClient.push(joined(out.slice(stallFrom)), rates.stallMs);
            out.length = 0;
            stallFrom = -1;
          }
        }
      }
      if (out.length === 0) return;
      if (stallFrom >= 0) {
        if (stallFrom > 0) toClient.push(joined(out.slice(0, stallFrom)), latency());
        toClient.push(joined(out.slice(stallFrom)), rates.stallMs);
      } else {
        toClient.push(joined(out), latency());
      }
    });
  };

  const listener = net.createServer(serve);
  listener.on("error", () => {});
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(0, "127.0.0.1", () => resolve());
  });
  const address = listener.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const host = "127.0.0.1";

  return {
    host,
    port,
    counts,
    urlFor(url: string) {
      const u = new URL(url);
      u.hostname = host;
      u.port = String(port);
      return u.toString();
    },
    setRates(next) {
      rates = { ...rates, ...next };
    },
    arm(kind, match = kind === "reply_lost" ? (r) => r.commitPoint !== null : () => true) {
      return new Promise<ProxiedRequest>((resolve) => armed.push({ kind, match, resolve }));
    },
    async close() {
      for (const s of sockets) s.destroy();
      sockets.clear();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
