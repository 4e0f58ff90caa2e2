import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * PayCo: the second system's payment provider, a tiny HTTP+JSON service of its own (nothing of the
 * demo's Stripe-compatible server). It charges once per Idempotency-Key, keeps what a caller put in
 * `reference` (where onceboardMetadata(claim) goes), and lists its charges by creation time with an
 * offset cursor, the shape docs/reconciliation.md's generic HTTP+JSON adapter reads:
 *
 *   POST /v1/charges   { amount, currency, reference }   Idempotency-Key, Authorization: Bearer
 *   GET  /v1/charges?created_gte=…&created_lt=…&limit=…&cursor=…  → { data: [charge…], next_cursor }
 *
 * Disagreements are planted per reference key, so a test knows exactly which it made: `double`
 * carries one request out twice, `lose` answers as charged and keeps nothing, `drift` keeps another
 * amount; `plantOrphan` records a charge no request made (a path that charged without a claim).
 */
export interface PaycoCharge {
  id: string;
  amount: number;
  currency: string;
  status: "succeeded";
  created_at: string;
  reference: Record<string, string>;
}

export type PaycoFault = "double" | "lose" | "drift";

export interface Payco {
  url: string;
  /** The list endpoint, for the providers file. */
  listUrl: string;
  token: string;
  charges: PaycoCharge[];
  /** Requests that reached POST /v1/charges (retries with a known Idempotency-Key included). */
  requests: number;
  plant(referenceKey: string, fault: PaycoFault): void;
  plantOrphan(charge: Omit<PaycoCharge, "id" | "status" | "created_at">): PaycoCharge;
  close(): Promise<void>;
}

/** What a caller of PayCo sends: the second system's own client, as a user would write it. */
export async function createCharge(
  payco: Pick<Payco, "url" | "token">,
  body: { amount: number; currency: string; reference: Record<string, string> },
  idempotencyKey: string,
): Promise<PaycoCharge> {
  const res = await fetch(`${payco.url}/v1/charges`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${payco.token}`, "idempotency-key": idempotencyKey },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`PayCo refused the charge: ${res.status} ${await res.text()}`);
  return (await res.json()) as PaycoCharge;
}

export async function startPayco(): Promise<Payco> {
  const token = `payco_${randomBytes(12).toString("hex")}`;
  const charges: PaycoCharge[] = [];
  const byIdempotencyKey = new Map<string, PaycoCharge>();
  const planted = new Map<string, PaycoFault>();
  let sequence = 0;
  let requests = 0;
  const record = (fields: Omit<PaycoCharge, "id" | "status" | "created_at">): PaycoCharge => {
    const charge: PaycoCharge = {
      id: `ch_${String(++sequence).padStart(6, "0")}`,
      status: "succeeded",
      created_at: new Date().toISOString(),
      ...fields,
    };
    charges.push(charge);
    return charge;
  };
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };

  const server = http.createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: "unknown token" });
    const url = new URL(req.url ?? "/", "http://payco");
    if (url.pathname !== "/v1/charges") return send(res, 404, { error: "no such path" });
    if (req.method === "GET") {
      const from = Date.parse(url.searchParams.get("created_gte") ?? "");
      const to = Date.parse(url.searchParams.get("created_lt") ?? "");
      const limit = Number(url.searchParams.get("limit") ?? 100);
      const offset = Number(url.searchParams.get("cursor") ?? 0);
      const inWindow = charges
        .filter((c) => Date.parse(c.created_at) >= from && Date.parse(c.created_at) < to)
        .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
      const data = inWindow.slice(offset, offset + limit);
      return send(res, 200, { data, next_cursor: offset + limit < inWindow.length ? String(offset + limit) : null });
    }
    if (req.method !== "POST") return send(res, 405, { error: "GET or POST" });
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      requests++;
      const key = req.headers["idempotency-key"];
      if (typeof key !== "string" || key === "") return send(res, 400, { error: "Idempotency-Key is required" });
      const known = byIdempotencyKey.get(key);
      if (known) return send(res, 200, known);
      const body = JSON.parse(raw) as { amount: number; currency: string; reference: Record<string, string> };
      const fault = planted.get(body.reference.onceboard_key ?? "");
      const fields = { amount: body.amount, currency: body.currency, reference: body.reference };
      if (fault === "lose") {
        // Accepted, answered, never kept.
        const ghost: PaycoCharge = {
          id: `ch_lost_${++sequence}`,
          status: "succeeded",
          created_at: new Date().toISOString(),
          ...fields,
        };
        byIdempotencyKey.set(key, ghost);
        return send(res, 200, ghost);
      }
      // Drift: the answer says what was asked for, the books keep another amount.
      const kept = record(fault === "drift" ? { ...fields, amount: fields.amount + 100 } : fields);
      if (fault === "double") record(fields);
      const answer = { ...kept, amount: fields.amount };
      byIdempotencyKey.set(key, answer);
      return send(res, 200, answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    listUrl: `${url}/v1/charges`,
    token,
    charges,
    get requests() {
      return requests;
    },
    plant(referenceKey, fault) {
      planted.set(referenceKey, fault);
    },
    plantOrphan: record,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
