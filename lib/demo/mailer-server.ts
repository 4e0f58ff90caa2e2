import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { EffectNotAppliedError } from "../idempotency";
import { PROVIDER_SCHEMA } from "./stripe-storage";

/**
 * The demo's mailer: an HTTP service that keeps every message it received (it does not dedupe:
 * two sends are two emails), in the provider's storage beside the Stripe-compatible server's
 * objects, not in the shop's tables. It has no npm client, so the reconciler reads it with the
 * generic HTTP+JSON adapter (lib/reconciliation/http-json.ts, MAILER_MAPPING in lib/demo/providers-file.ts):
 *
 *   POST /mailer/messages  {"to", "subject", "onceboard_key", "onceboard_tenant"} → 201 {"id", "sent_at", …}
 *   GET  /mailer/messages?created_gte=<iso>&created_lt=<iso>&limit=<1..500>[&cursor=<next_cursor>]
 *        → {"messages": [...], "next_cursor": "…" | null}, oldest first
 *
 * An at-most-once send that was claimed and abandoned before it reached the mailer is the email
 * that was never sent: the reconciler finds its effect with no message here.
 */
const MAILER_PATH = "/mailer/messages";
const MAX_LIMIT = 500;

const MAILER_SCHEMA_SQL = `
CREATE SCHEMA IF NOT EXISTS ${PROVIDER_SCHEMA};
CREATE TABLE IF NOT EXISTS ${PROVIDER_SCHEMA}.messages (
  id               bigserial   NOT NULL,
  recipient        text        NOT NULL,
  subject          text        NOT NULL,
  onceboard_key    text,
  onceboard_tenant text,
  sent_at          timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT messages_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS messages_sent_at_idx ON ${PROVIDER_SCHEMA}.messages (sent_at, id);`;

// Prepared (named): parsed and planned once per connection, not at every send (a receipt per order in the soak).
const RECEIVE_SQL = {
  name: "mailer_receive_v1",
  text: `INSERT INTO ${PROVIDER_SCHEMA}.messages (recipient, subject, onceboard_key, onceboard_tenant)
       VALUES ($1, $2, $3, $4) RETURNING *`,
} as const;

export async function installMailerSchema(db: pg.Pool | pg.ClientBase): Promise<void> {
  await db.query(MAILER_SCHEMA_SQL);
}

interface SentMessage {
  id: string;
  to: string;
  subject: string;
  onceboard_key: string | null;
  onceboard_tenant: string | null;
  sent_at: string;
}

interface MessageRow {
  id: string;
  recipient: string;
  subject: string;
  onceboard_key: string | null;
  onceboard_tenant: string | null;
  sent_at: Date;
}

const toMessage = (row: MessageRow): SentMessage => ({
  id: `msg_${row.id}`,
  to: row.recipient,
  subject: row.subject,
  onceboard_key: row.onceboard_key,
  onceboard_tenant: row.onceboard_tenant,
  sent_at: row.sent_at.toISOString(),
});

class BadRequest extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export interface MailerServer {
  port: number;
  /** The list endpoint (the demo's providers file names it) and where sends are posted. */
  url: string;
  pool: pg.Pool;
  close(): Promise<void>;
}

export async function startMailerServer(options: { databaseUrl: string; port?: number; host?: string }): Promise<MailerServer> {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 4, application_name: "onceboard-demo-mailer" });
  pool.on("error", () => {});
  await installMailerSchema(pool);

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
      if (body && typeof body === "object" && !Array.isArray(body)) return body as Record<string, unknown>;
    } catch {
      // answered below
    }
    throw new BadRequest("body", "the body must be a JSON object");
  }

  const text = (body: Record<string, unknown>, field: string, required: boolean): string | null => {
    const value = body[field];
    if (value === undefined || value === null) {
      if (required) throw new BadRequest(field, `${field} is required`);
      return null;
    }
    if (typeof value !== "string" || value === "" || value.length > 500)
      throw new BadRequest(field, `${field} must be a string of 1 to 500 characters`);
    return value;
  };

  async function receive(req: http.IncomingMessage): Promise<SentMessage> {
    const body = await readJson(req);
    const { rows } = await pool.query<MessageRow>({
      ...RECEIVE_SQL,
      values: [
        text(body, "to", true),
        text(body, "subject", true),
        text(body, "onceboard_key", false),
        text(body, "onceboard_tenant", false),
      ],
    });
    return toMessage(rows[0]!);
  }

  async function list(params: URLSearchParams) {
    const time = (name: string) => {
      const value = params.get(name);
      if (value === null) return null;
      const at = new Date(value);
      if (Number.isNaN(at.getTime())) throw new BadRequest(name, `${name} must be an ISO 8601 time`);
      return at;
    };
    const limit = Number(params.get("limit") ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      throw new BadRequest("limit", `limit must be a whole number from 1 to ${MAX_LIMIT}`);
    const cursor = params.get("cursor");
    if (cursor !== null && !/^\d{1,18}$/.test(cursor))
      throw new BadRequest("cursor", "cursor must be a next_cursor this list gave");
    // Keyset on id: ids grow with sent_at, and a cursor stays valid however many messages arrive meanwhile.
    const { rows } = await pool.query<MessageRow>(
      `SELECT * FROM ${PROVIDER_SCHEMA}.messages
        WHERE ($1::timestamptz IS NULL OR sent_at >= $1) AND ($2::timestamptz IS NULL OR sent_at < $2)
          AND ($3::bigint IS NULL OR id > $3)
        ORDER BY id LIMIT $4`,
      [time("created_gte"), time("created_lt"), cursor, limit + 1],
    );
    const page = rows.slice(0, limit);
    return { messages: page.map(toMessage), next_cursor: rows.length > limit ? String(page.at(-1)!.id) : null };
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://mailer");
    const answer = async () => {
      if (url.pathname !== MAILER_PATH) return send(res, 404, { error: `no such path: ${url.pathname}` });
      if (req.method === "POST") return send(res, 201, await receive(req));
      if (req.method === "GET") return send(res, 200, await list(url.searchParams));
      return send(res, 405, { error: `${req.method} is not supported on ${MAILER_PATH}` });
    };
    answer().catch((error) => {
      if (res.headersSent) return res.end();
      if (error instanceof BadRequest) return send(res, 400, { error: error.message, field: error.field });
      send(res, 500, { error: error instanceof Error ? error.message : String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}${MAILER_PATH}`,
    pool,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

/** Below http.Server's default keepAliveTimeout (5 s), which the mailer server keeps. */
const IDLE_CONNECTION_MS = 4000;

/** What the demo's handlers send receipts with: a plain HTTP client, as for any mailer without an npm package. */
export class MailerClient {
  private readonly target: URL;
  // Sends reuse open connections: fetch (undici) costs Node 20 several times http.request's CPU
  // per send, and the soak sends a receipt per order. An idle connection is closed after 4 s,
  // before the server's 5 s keep-alive timeout, so a send does not meet a connection the server
  // is closing (Node's agent ignores the server's Keep-Alive hint unless it is given a timeout;
  // the timeout acts on idle sockets only, a slow reply is not cut).
  private readonly agent = new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS });

  constructor(url: string) {
    this.target = new URL(url);
  }

  async send(message: { to: string; subject: string; onceboard_key: string; onceboard_tenant: string }): Promise<SentMessage> {
    const { status, text } = await this.post(JSON.stringify(message));
    // A 4xx is a refusal: nothing was stored, so the at-most-once step may try again. A 5xx (or a
    // dropped connection, a plain Error from post) may come after the message was stored: a plain
    // Error, and the step is abandoned rather than risk a second email.
    if (status >= 400 && status < 500)
      throw new EffectNotAppliedError(`the mailer refused the message (${status}): ${text.slice(0, 200)}`);
    if (status < 200 || status >= 300)
      throw new Error(`the mailer failed (${status}); the message may have been stored: ${text.slice(0, 200)}`);
    return JSON.parse(text) as SentMessage;
  }

  /** Closes the idle connections. */
  close(): void {
    this.agent.destroy();
  }

  private post(body: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        this.target,
        {
          method: "POST",
          agent: this.agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
          res.on("error", reject);
          // Cut mid-reply: the message may have been stored.
          res.on("close", () => {
            if (!res.complete) reject(new Error("the mailer's connection closed before its reply was complete"));
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }
}
