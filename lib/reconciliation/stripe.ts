import Stripe from "stripe";
import type { Config } from "../config";
import { PROVIDER_METADATA_KEY, PROVIDER_METADATA_TENANT } from "../idempotency";
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

/** Stripe's largest page. */
const STRIPE_PAGE_LIMIT = 100;

/** The stripe client for a config: Stripe itself, or a Stripe-compatible server at STRIPE_HOST/PORT/PROTOCOL. */
export function stripeClient(
  config: Pick<Config, "STRIPE_API_KEY" | "STRIPE_HOST" | "STRIPE_PORT" | "STRIPE_PROTOCOL">,
  options: { maxNetworkRetries?: number } = {},
): Stripe {
  if (!config.STRIPE_API_KEY)
    throw new ProviderReadError("auth", "STRIPE_API_KEY is not set: the Stripe provider cannot be read");
  return new Stripe(config.STRIPE_API_KEY, {
    ...(config.STRIPE_HOST ? { host: config.STRIPE_HOST } : {}),
    ...(config.STRIPE_PORT ? { port: config.STRIPE_PORT } : {}),
    ...(config.STRIPE_PROTOCOL ? { protocol: config.STRIPE_PROTOCOL } : {}),
    // Our own retry loop honours Retry-After on 429s, which the client's does not; one loop, one budget.
    maxNetworkRetries: options.maxNetworkRetries ?? 0,
    telemetry: false,
  });
}

// The cursor walks PaymentIntents, then Refunds, each newest first (Stripe's list order).
interface StripeCursor {
  list: "payment_intents" | "refunds";
  after: string | null;
}

type Listed = {
  id: string;
  amount: number;
  currency: string;
  status: string | null;
  created: number;
  metadata: Stripe.Metadata | null;
};

function toObject(item: Listed): ProviderObject {
  const metadata = (item.metadata ?? {}) as Record<string, string>;
  return {
    id: item.id,
    key: metadata[PROVIDER_METADATA_KEY] ?? null,
    tenant: metadata[PROVIDER_METADATA_TENANT] ?? null,
    amount: item.amount,
    currency: item.currency,
    status: item.status,
    created: new Date(item.created * 1000),
    metadata,
  };
}

/** Maps the client's errors to what a run does with them: retry, or fail with the reason. */
function classify(error: unknown): never {
  if (error instanceof Stripe.errors.StripeError) {
    const status = error.statusCode;
    if (status === 401 || status === 403 || error instanceof Stripe.errors.StripeAuthenticationError) {
      throw new ProviderReadError("auth", `Stripe refused the API key (${status ?? "no status"}): ${error.message}`, {
        cause: error,
      });
    }
    if (status === 429 || error instanceof Stripe.errors.StripeRateLimitError) {
      const headers = (error.headers ?? {}) as Record<string, string>;
      throw new RetryableProviderError(`429 rate limited: ${error.message}`, retryAfterMs(headers["retry-after"]));
    }
    if (status !== undefined && status >= 500) throw new RetryableProviderError(`${status}: ${error.message}`, null);
    if (error instanceof Stripe.errors.StripeConnectionError) throw new RetryableProviderError(error.message, null);
    if (status === undefined && /Invalid JSON/i.test(error.message)) {
      throw new ProviderReadError("malformed", `Stripe answered with malformed JSON: ${error.message}`, { cause: error });
    }
    throw new ProviderReadError("refused", `Stripe refused the list request (${status ?? "no status"}): ${error.message}`, {
      cause: error,
    });
  }
  throw error;
}

/**
 * PaymentIntents and Refunds by `created` range — the list endpoints, not Search, which Stripe
 * documents as lagging behind writes. Page by page with `starting_after`, as the client's
 * auto-pagination does, so the reconciler can checkpoint between pages.
 */
export class StripeAdapter implements ProviderAdapter {
  readonly provider = "stripe";

  constructor(
    private readonly stripe: Stripe,
    private readonly retry: RetryPolicy = DEFAULT_RETRY_POLICY,
    private readonly pageLimit = STRIPE_PAGE_LIMIT,
  ) {}

  async listPage(window: ReconcileWindow, cursor: string | null): Promise<ProviderPage> {
    const at: StripeCursor = cursor ? (JSON.parse(cursor) as StripeCursor) : { list: "payment_intents", after: null };
    const params = {
      // Stripe's created filter is in whole seconds; [from, to) becomes gte/lte on seconds.
      created: { gte: Math.floor(window.from.getTime() / 1000), lte: Math.ceil(window.to.getTime() / 1000) - 1 },
      limit: this.pageLimit,
      ...(at.after ? { starting_after: at.after } : {}),
    };
    const page = await withRetries(`Stripe ${at.list} list`, this.retry, async () => {
      try {
        const list =
          at.list === "payment_intents" ? await this.stripe.paymentIntents.list(params) : await this.stripe.refunds.list(params);
        if (!list || !Array.isArray(list.data))
          throw new ProviderReadError("malformed", `Stripe ${at.list} list has no data array`);
        return list as { data: Listed[]; has_more: boolean };
      } catch (error) {
        if (error instanceof ProviderReadError) throw error;
        return classify(error);
      }
    });
    const objects = page.data.map(toObject);
    const last = page.data.at(-1);
    let next: StripeCursor | null = null;
    if (page.has_more && last) next = { list: at.list, after: last.id };
    else if (at.list === "payment_intents") next = { list: "refunds", after: null };
    return { objects, next: next ? JSON.stringify(next) : null };
  }
}
