import { isIP } from "node:net";
import type pg from "pg";
import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import { type Config, loadConfig } from "../config";
import { getPool } from "../db/pool";

/**
 * The console's rate limits, counted in PostgreSQL (table rate_limits, rate-limiter-flexible's
 * RateLimiterPostgres) so every console process shares them: two replicas do not double a limit.
 * - credentials: sign-in attempts, and requests whose Bearer token is unknown, per client address
 *   (ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE). While it is used up, that address's Bearer requests
 *   are refused before their token is looked up, so a guess that happens to be right gets a 429 too;
 * - tokens: authenticated requests per token (ONCEBOARD_RATE_LIMIT_PER_MINUTE);
 * - addresses: authenticated requests per client address (ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE).
 * The client address is the one lib/auth/client-ip.ts trusts (IPv6 counted by its /64); unknown,
 * every such request shares one key. A store that cannot be reached throws: callers answer 503, never "allowed".
 */
const RATE_LIMIT_TABLE = "rate_limits";

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until one more request is allowed (when refused). */
  retryAfterSeconds: number;
}

export interface RateLimits {
  /** Counts a sign-in attempt from `address`. */
  signInAttempt(address: string | null): Promise<RateDecision>;
  /** Whether `address` may present another Bearer token (its unknown ones have not used up the limit). */
  mayPresentCredentials(address: string | null): Promise<RateDecision>;
  /** Counts an unknown or invalid credential from `address`. */
  badCredential(address: string | null): Promise<RateDecision>;
  /** Counts an authenticated request, against its principal (auth-types.ts principalKey) and its address. */
  authenticatedRequest(principalKey: string, address: string | null): Promise<RateDecision>;
}

type Limits = Pick<
  Config,
  "ONCEBOARD_RATE_LIMIT_PER_MINUTE" | "ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE" | "ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE"
>;

const ALLOWED: RateDecision = { allowed: true, retryAfterSeconds: 0 };

function refused(res: RateLimiterRes): RateDecision {
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
}

/** A refusal (RateLimiterRes) as a decision; anything else (the store failed) is thrown on. */
async function decide(consume: Promise<unknown>): Promise<RateDecision> {
  try {
    await consume;
    return ALLOWED;
  } catch (error) {
    if (error instanceof RateLimiterRes) return refused(error);
    throw error;
  }
}

/**
 * The key an address is counted under: an IPv4 address itself, an IPv6 address by its /64 (one
 * subscriber's network: a host that owns a /64 must not get 2^64 separate limits).
 */
export function addressKey(address: string | null): string {
  if (address === null) return "unknown";
  if (isIP(address) !== 6) return address;
  const [head = "", tail = ""] = address.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = address.includes("::") ? (tail === "" ? [] : tail.split(":")) : [];
  const groups = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

/** Rate limits on `pool`'s database, in `schema`. */
export function createRateLimits(pool: pg.Pool, schema: string, limits: Limits): RateLimits {
  const limiter = (keyPrefix: string, points: number) =>
    new RateLimiterPostgres({
      storeClient: pool,
      storeType: "pool",
      schemaName: schema,
      tableName: RATE_LIMIT_TABLE,
      // Made by the console's migrations (prisma/migrations), not by the library at run time.
      tableCreated: true,
      keyPrefix,
      points,
      duration: 60,
    });
  const credentials = limiter("credentials", limits.ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE);
  const tokens = limiter("token", limits.ONCEBOARD_RATE_LIMIT_PER_MINUTE);
  const addresses = limiter("address", limits.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE);
  return {
    signInAttempt: (address) => decide(credentials.consume(addressKey(address))),
    badCredential: (address) => decide(credentials.consume(addressKey(address))),
    async mayPresentCredentials(address) {
      const res = await credentials.get(addressKey(address));
      return res && res.consumedPoints >= credentials.points ? refused(res) : ALLOWED;
    },
    async authenticatedRequest(principalKey, address) {
      const byToken = await decide(tokens.consume(principalKey));
      if (!byToken.allowed) return byToken;
      return decide(addresses.consume(addressKey(address)));
    },
  };
}

declare global {
  var __onceboardRateLimits: { source: string; limits: RateLimits } | undefined;
}

/** The console's rate limits on its own pool (made again when the configured limits change). */
export function getRateLimits(): RateLimits {
  const config = loadConfig();
  const source = [
    config.ONCEBOARD_SCHEMA,
    config.ONCEBOARD_RATE_LIMIT_PER_MINUTE,
    config.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE,
    config.ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE,
  ].join(":");
  if (globalThis.__onceboardRateLimits?.source !== source) {
    globalThis.__onceboardRateLimits = { source, limits: createRateLimits(getPool(), config.ONCEBOARD_SCHEMA, config) };
  }
  return globalThis.__onceboardRateLimits.limits;
}
