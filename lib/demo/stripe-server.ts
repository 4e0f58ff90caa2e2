import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import {
  CREATE_SQL,
  installProviderSchema,
  objectId,
  PROVIDER_SCHEMA,
  type ProviderRow,
  RETRIEVE_SQL,
  toStripe,
} from "./stripe-storage";

/**
 * The demo's payment provider: a Stripe-compatible HTTP server with its own storage (schema
 * onceboard_demo_provider), so the demo's handlers and the reconciler talk to it through the same
 * `stripe` client a user points at Stripe. It speaks the part of Stripe's API they use:
 * POST/GET /v1/payment_intents, GET /v1/payment_intents/{id}, POST/GET /v1/refunds, form-encoded
 * bodies, Bearer secret keys, Idempotency-Key honoured for a window (24 h, as Stripe), lists by
 * created[gte|lte] newest first with limit and starting_after.
 *
 * It can misbehave on purpose. Disagreements, each drawn per create at its rate and recorded in
 * `injections` so demo:verify can compare them with the reconciler's findings:
 * - duplicate: a repeated key is "pruned" and a second object is created for it; a new key's
 *   request is carried out twice (two objects, as a provider that does not check keys across its
 *   regions does). Either way one injection, one extra object;
 * - lost: the request is answered as accepted but no object is kept;
 * - keyless: the object is stored without its Onceboard metadata (a legacy path);
 * - drift: the object is stored with another amount.
 * At most one disagreement per request, so each injection is one finding to look for.
 * And failures of the API itself, for tests: 429 with Retry-After, 5xx, malformed JSON.
 */
const DEFAULT_IDEMPOTENCY_WINDOW_SECONDS = 24 * 3600;

const DISAGREEMENTS = ["duplicate", "lost", "keyless", "drift"] as const;
export type Disagreement = (typeof DISAGREEMENTS)[number];

export interface ProviderFaults {
  /** Per create, each at its rate (0..1). */
  rates: Record<Disagreement, number>;
  /** The next N requests answer 429 with this Retry-After (seconds). */
  rateLimitNext: { count: number; retryAfterSeconds: number };
  /** The next N requests answer this 5xx status. */
  serverErrorNext: { count: number; status: number };
  /** The next N list requests answer 200 with a body that is not JSON. */
  malformedNext: number;
}

export const noFaults = (): ProviderFaults => ({
  rates: { duplicate: 0, lost: 0, keyless: 0, drift: 0 },
  rateLimitNext: { count: 0, retryAfterSeconds: 1 },
  serverErrorNext: { count: 0, status: 500 },
  malformedNext: 0,
});

/** Parses Stripe's form encoding: `metadata[a]=1&created[gte]=5` → { metadata: { a: "1" }, created: { gte: "5" } }. */
function parseStripeForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const parts = name.split(/\[|\]\[|\]/).filter((part) => part !== "");
    let node = out;
    for (const part of parts.slice(0, -1)) {
      if (!node[part] || typeof node[part] !== "object") node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    node[parts.at(-1) ?? name] = value;
  }
  return out;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

interface StripeServerOptions {
  databaseUrl: string;
  /** Secret keys accepted as Bearer tokens. */
  apiKeys: string[];
  port?: number;
  host?: string;
  idempotencyWindowSeconds?: number;
  faults?: ProviderFaults;
  random?: () => number;
}

export interface StripeServer {
  port: number;
  url: string;
  /** Mutable: tests turn failures on and off while it runs. */
  faults: ProviderFaults;
  pool: pg.Pool;
  close(): Promise<void>;
}

export async function startStripeServer(options: StripeServerOptions): Promise<StripeServer> {
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 8, application_name: "onceboard-demo-provider" });
  pool.on("error", () => {});
  // A checked-out client (a create's transaction) has no listener of pg-pool's: a server restart
  // mid-request would crash the process instead of failing that request with a 500.
  pool.on("connect", (client) => client.on("error", () => {}));
  await installProviderSchema(pool);
  const windowSeconds = options.idempotencyWindowSeconds ?? DEFAULT_IDEMPOTENCY_WINDOW_SECONDS;
  const random = options.random ?? Math.random;
  const faults = options.faults ?? noFaults();
  const state = { faults };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error) => {
      const status = error instanceof HttpError ? error.status : 500;
      const body = {
        error: {
          type: error instanceof HttpError ? error.type : "api_error",
          message: error instanceof Error ? error.message : String(error),
          ...(error instanceof HttpError && error.param ? { param: error.param } : {}),
        },
      };
      if (!res.headersSent) res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });

  async function readBody(req: http.IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }

  function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { "content-type": "application/json", "request-id": objectId("req"), ...headers });
    res.end(JSON.stringify(body));
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? "/", "http://provider");
    const auth = req.headers.authorization ?? "";
    const apiKey = auth.startsWith("Bearer ") ? auth.slice(7) : "";
    if (!options.apiKeys.includes(apiKey)) {
      throw new HttpError(401, "invalid_request_error", `Invalid API Key provided: ${apiKey.slice(0, 8)}…`);
    }
    const f = state.faults;
    if (f.rateLimitNext.count > 0) {
      f.rateLimitNext.count--;
      return send(
        res,
        429,
        { error: { type: "rate_limit_error", message: "Too many requests" } },
        {
          "retry-after": String(f.rateLimitNext.retryAfterSeconds),
        },
      );
    }
    if (f.serverErrorNext.count > 0) {
      f.serverErrorNext.count--;
      return send(res, f.serverErrorNext.status, { error: { type: "api_error", message: "injected server error" } });
    }
    const match = /^\/v1\/(payment_intents|refunds)(?:\/([A-Za-z0-9_]+))?$/.exec(url.pathname);
    if (!match) throw new HttpError(404, "invalid_request_error", `Unrecognized request URL (${req.method}: ${url.pathname})`);
    const kind = match[1] === "payment_intents" ? "payment_intent" : "refund";
    if (req.method === "GET" && match[2]) return send(res, 200, await retrieve(kind, match[2]));
    if (req.method === "GET") {
      if (f.malformedNext > 0) {
        f.malformedNext--;
        res.writeHead(200, { "content-type": "application/json" });
        return res.end('{"object":"list","data":[{"id":');
      }
      return send(res, 200, await list(kind, parseStripeForm(url.search.slice(1)), url.pathname));
    }
    if (req.method === "POST" && !match[2]) {
      const params = parseStripeForm(await readBody(req));
      const key = req.headers["idempotency-key"];
      return create(res, kind, params, apiKey, typeof key === "string" && key !== "" ? key : null, url.pathname);
    }
    throw new HttpError(405, "invalid_request_error", `${req.method} is not supported on ${url.pathname}`);
  }

  async function retrieve(kind: ProviderRow["kind"], id: string) {
    const { rows } = await pool.query<ProviderRow>({ ...RETRIEVE_SQL, values: [id, kind] });
    if (!rows[0]) throw new HttpError(404, "invalid_request_error", `No such ${kind}: '${id}'`, "id");
    return toStripe(rows[0]);
  }

  async function list(kind: ProviderRow["kind"], params: Record<string, unknown>, path: string) {
    const created = (params.created ?? {}) as Record<string, string>;
    const int = (value: unknown, name: string) => {
      if (value === undefined) return null;
      const n = Number(value);
      if (!Number.isInteger(n)) throw new HttpError(400, "invalid_request_error", `Invalid integer: ${String(value)}`, name);
      return n;
    };
    const limit = int(params.limit, "limit") ?? 10;
    if (limit < 1 || limit > 100) throw new HttpError(400, "invalid_request_error", "limit must be between 1 and 100", "limit");
    const gte = int(created.gte, "created[gte]");
    const lte = int(created.lte, "created[lte]");
    const after = typeof params.starting_after === "string" ? params.starting_after : null;
    // One statement per page, with only the conditions asked for (a "$n IS NULL OR …" condition
    // would keep a generic plan off the index), walking objects_list_idx by the keyset
    // (created, id) from the starting_after object, looked up in the same statement.
    const values: unknown[] = [kind];
    const where = ["kind = $1"];
    if (gte !== null) where.push(`created >= $${values.push(gte)}`);
    if (lte !== null) where.push(`created <= $${values.push(lte)}`);
    if (after !== null) {
      const at = `$${values.push(after)}`;
      where.push(
        `(created, id) < ((SELECT a.created FROM ${PROVIDER_SCHEMA}.objects a WHERE a.id = ${at}), (SELECT a.id FROM ${PROVIDER_SCHEMA}.objects a WHERE a.id = ${at}))`,
      );
    }
    const { rows } = await pool.query<ProviderRow>(
      `SELECT * FROM ${PROVIDER_SCHEMA}.objects WHERE ${where.join(" AND ")}
        ORDER BY created DESC, id DESC LIMIT $${values.push(limit + 1)}`,
      values,
    );
    // An empty page after a cursor: Stripe's answer to a cursor that names no object is a 400.
    if (after !== null && rows.length === 0) {
      const { rowCount } = await pool.query(`SELECT 1 FROM ${PROVIDER_SCHEMA}.objects WHERE id = $1`, [after]);
      if (rowCount === 0) throw new HttpError(400, "invalid_request_error", `No such object: '${after}'`, "starting_after");
    }
    return { object: "list", url: path, has_more: rows.length > limit, data: rows.slice(0, limit).map(toStripe) };
  }

  async function create(
    res: http.ServerResponse,
    kind: ProviderRow["kind"],
    params: Record<string, unknown>,
    apiKey: string,
    idempotencyKey: string | null,
    path: string,
  ) {
    const amount = Number(params.amount);
    if (!Number.isInteger(amount) || amount < 1) throw new HttpError(400, "invalid_request_error", "Invalid amount", "amount");
    const currency = typeof params.currency === "string" ? params.currency.toLowerCase() : "usd";
    const metadata = (params.metadata && typeof params.metadata === "object" ? params.metadata : {}) as Record<string, string>;
    const paymentIntent = typeof params.payment_intent === "string" ? params.payment_intent : null;
    const client = await pool.connect();
    // A disagreement drawn for this request is planted only if its key has none yet (planted_keys'
    // primary key decides, inside this request's transaction).
    const draw = async (d: Disagreement) => {
      if (!(random() < state.faults.rates[d])) return false;
      const tenant = metadata.onceboard_tenant;
      const key = metadata.onceboard_key;
      if (!tenant || !key) return true;
      const { rowCount } = await client.query(
        `INSERT INTO ${PROVIDER_SCHEMA}.planted_keys (onceboard_tenant, onceboard_key) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
        [tenant, key],
      );
      return rowCount === 1;
    };
    let duplicate = false;
    let doubled = false;
    try {
      await client.query("BEGIN");
      if (idempotencyKey) {
        duplicate = await draw("duplicate");
        // Stripe prunes keys after its window; the "duplicate" disagreement prunes this one early.
        const pruned = await client.query({
          ...CREATE_SQL.pruneKey,
          values: [apiKey, idempotencyKey, windowSeconds, duplicate],
        });
        const { rowCount } = await client.query({ ...CREATE_SQL.takeKey, values: [apiKey, idempotencyKey, path] });
        if (rowCount === 0) {
          const { rows } = await client.query<{ status: number; response: unknown; path: string }>({
            ...CREATE_SQL.replay,
            values: [apiKey, idempotencyKey],
          });
          await client.query("COMMIT");
          if (rows[0]!.path !== path) {
            throw new HttpError(400, "idempotency_error", "Keys for idempotent requests can only be used for the same endpoint");
          }
          return send(res, rows[0]!.status, rows[0]!.response, { "idempotent-replayed": "true" });
        }
        // A new key's duplicate is the request carried out twice; a repeated key's, the object made after the prune.
        doubled = duplicate && pruned.rowCount === 0;
      }
      const id = objectId(kind === "payment_intent" ? "pi" : "re");
      let stored = { amount, metadata };
      // One disagreement per request at most: `planted` once one is.
      let planted = duplicate;
      if (duplicate) {
        const extra = doubled ? objectId(kind === "payment_intent" ? "pi" : "re") : id;
        await inject(client, "duplicate", extra, metadata);
        if (doubled) {
          await client.query(
            `INSERT INTO ${PROVIDER_SCHEMA}.objects (id, kind, amount, currency, status, metadata, payment_intent, created)
             VALUES ($1, $2, $3, $4, 'succeeded', $5, $6, $7)`,
            [extra, kind, amount, currency, metadata, paymentIntent, Math.floor(Date.now() / 1000)],
          );
        }
      } else if (await draw("keyless")) {
        const { onceboard_key: _k, onceboard_tenant: _t, ...rest } = metadata;
        await inject(client, "keyless", id, metadata);
        stored = { ...stored, metadata: rest };
        planted = true;
      } else if (await draw("drift")) {
        await inject(client, "drift", id, metadata);
        stored = { ...stored, amount: amount + 1 };
        planted = true;
      }
      const row: ProviderRow = {
        id,
        kind,
        amount: stored.amount,
        currency,
        status: "succeeded",
        metadata: stored.metadata,
        payment_intent: paymentIntent,
        created: Math.floor(Date.now() / 1000),
      };
      if (!planted && (await draw("lost"))) await inject(client, "lost", id, metadata);
      else {
        await client.query({
          ...CREATE_SQL.insertObject,
          values: [row.id, row.kind, row.amount, row.currency, row.status, row.metadata, row.payment_intent, row.created],
        });
      }
      // The caller is told what it asked for: a lost or drifted object looks fine from its side.
      const response = toStripe({ ...row, amount, metadata });
      if (idempotencyKey) {
        await client.query({ ...CREATE_SQL.storeResponse, values: [apiKey, idempotencyKey, response] });
      }
      await client.query("COMMIT");
      return send(res, 200, response);
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async function inject(client: pg.PoolClient, disagreement: Disagreement, id: string | null, metadata: Record<string, string>) {
    await client.query(
      `INSERT INTO ${PROVIDER_SCHEMA}.injections (disagreement, object_id, onceboard_key, onceboard_tenant) VALUES ($1, $2, $3, $4)`,
      [disagreement, id, metadata.onceboard_key ?? null, metadata.onceboard_tenant ?? null],
    );
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    get faults() {
      return state.faults;
    },
    set faults(value) {
      state.faults = value;
    },
    pool,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}
