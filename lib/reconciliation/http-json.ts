import {
  DEFAULT_RETRY_POLICY,
  type ProviderAdapter,
  type ProviderObject,
  type ProviderPage,
  ProviderReadError,
  type ReconcileWindow,
  RetryableProviderError,
  type RetryPolicy,
  retryAfterMs,
  withRetries,
} from "./adapter";

/**
 * A provider without an npm client: an HTTP list endpoint answering JSON, and where in each item
 * the fields are. GET <url>?<from>=<iso>&<to>=<iso>&<limit>=<n>[&<cursor>=<next>] answers
 * `{ <items>: [...], <next>: "…" | null }`; fields are dotted paths into an item ("meta.key").
 */
export interface HttpJsonMapping {
  items: string;
  next: string;
  id: string;
  key: string;
  tenant: string;
  created: string;
  amount?: string;
  currency?: string;
  status?: string;
  /** Query parameter names. */
  params?: { from?: string; to?: string; limit?: string; cursor?: string };
}

const at = (value: unknown, path: string): unknown =>
  path
    .split(".")
    .reduce<unknown>(
      (node, part) => (node && typeof node === "object" ? (node as Record<string, unknown>)[part] : undefined),
      value,
    );

export class HttpJsonAdapter implements ProviderAdapter {
  constructor(
    readonly provider: string,
    private readonly url: string,
    private readonly mapping: HttpJsonMapping,
    private readonly options: { bearer?: string; pageLimit?: number; retry?: RetryPolicy } = {},
  ) {}

  async listPage(window: ReconcileWindow, cursor: string | null): Promise<ProviderPage> {
    const p = { from: "created_gte", to: "created_lt", limit: "limit", cursor: "cursor", ...this.mapping.params };
    const url = new URL(this.url);
    url.searchParams.set(p.from, window.from.toISOString());
    url.searchParams.set(p.to, window.to.toISOString());
    url.searchParams.set(p.limit, String(this.options.pageLimit ?? 100));
    if (cursor) url.searchParams.set(p.cursor, cursor);
    const body = await withRetries(`${this.provider} list`, this.options.retry ?? DEFAULT_RETRY_POLICY, async () => {
      let res: Response;
      try {
        res = await fetch(url, { headers: this.options.bearer ? { authorization: `Bearer ${this.options.bearer}` } : {} });
      } catch (error) {
        throw new RetryableProviderError(
          `${this.provider} unreachable: ${error instanceof Error ? error.message : String(error)}`,
          null,
        );
      }
      if (res.status === 429) throw new RetryableProviderError("429 rate limited", retryAfterMs(res.headers.get("retry-after")));
      if (res.status >= 500) throw new RetryableProviderError(`${res.status} ${res.statusText}`, null);
      if (res.status === 401 || res.status === 403)
        throw new ProviderReadError("auth", `${this.provider} refused the credentials (${res.status})`);
      if (!res.ok) throw new ProviderReadError("refused", `${this.provider} refused the list request (${res.status})`);
      const text = await res.text();
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new ProviderReadError("malformed", `${this.provider} answered with malformed JSON: ${text.slice(0, 80)}`);
      }
    });
    const items = at(body, this.mapping.items);
    if (!Array.isArray(items))
      throw new ProviderReadError("malformed", `${this.provider} list has no "${this.mapping.items}" array`);
    const text = (item: unknown, path: string | undefined) => {
      const value = path ? at(item, path) : undefined;
      return value === undefined || value === null ? null : String(value);
    };
    const objects = items.map((item): ProviderObject => {
      const id = text(item, this.mapping.id);
      const created = new Date(text(item, this.mapping.created) ?? "");
      if (!id || Number.isNaN(created.getTime())) {
        throw new ProviderReadError(
          "malformed",
          `${this.provider} list item lacks ${this.mapping.id} or a time at ${this.mapping.created}`,
        );
      }
      const amount = text(item, this.mapping.amount);
      return {
        id,
        key: text(item, this.mapping.key),
        tenant: text(item, this.mapping.tenant),
        amount: amount === null ? null : Number(amount),
        currency: text(item, this.mapping.currency),
        status: text(item, this.mapping.status),
        created,
        metadata: {},
      };
    });
    const next = at(body, this.mapping.next);
    // A cursor that is there but unreadable must not end the listing early: that would read as "missing".
    if (next !== undefined && next !== null && next !== "" && typeof next !== "string" && typeof next !== "number")
      throw new ProviderReadError("malformed", `${this.provider} list's "${this.mapping.next}" is neither a string nor a number`);
    return { objects, next: next === undefined || next === null || next === "" ? null : String(next) };
  }
}
