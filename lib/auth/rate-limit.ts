import { isIP } from "node:net";
import type pg from "pg";
import { RateLimiterPostgres, RateLimiterRes } from "rate-limiter-flexible";
import { type Config, loadConfig } from "../config";
import { getPool } from "../db/pool";
import { AUTH_CHANGED_CHANNEL, authChanged } from "./auth-cache";

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
 *
 * The two authenticated limits are taken from PostgreSQL in shares (LocalShares below): one upsert
 * counts up to ONCEBOARD_RATE_LIMIT_SHARE requests at once, and this process spends them without
 * asking again. Every allowed request was counted in PostgreSQL before it was allowed, so the
 * processes together never allow more than the limit; a share is at most 1/16 of what the window
 * has left, so what one process holds unspent refuses others early by at most that much.
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
> &
  Partial<Pick<Config, "ONCEBOARD_RATE_LIMIT_SHARE">>;

const ALLOWED: RateDecision = { allowed: true, retryAfterSeconds: 0 };

function refused(res: RateLimiterRes): RateDecision {
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
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

/** Local shares kept at most; past it the expired ones go, then the oldest. */
const MAX_SHARES = 10_000;

/**
 * Points of one limiter taken from PostgreSQL ahead of need and spent in this process. A share is
 * sized from what the key's window had left at the last upsert (1/16 of it, at most `maxShare`;
 * 1 when nothing is known yet or little is left, which is exact), and it lapses with the window it
 * was counted in. When the upsert overshoots the limit, the part of it still under the limit is
 * this process's (the counter already holds it, so no other process can be given it), and the
 * rest is refused as before. A store that cannot be reached throws once the share is spent.
 */
class LocalShares {
  private readonly shares = new Map<string, { left: number; until: number; next: number }>();

  constructor(
    private readonly limiter: RateLimiterPostgres,
    private readonly maxShare: number,
  ) {}

  async take(key: string, now = Date.now()): Promise<RateDecision> {
    const share = this.shares.get(key);
    if (share && share.until > now && share.left > 0) {
      share.left--;
      return ALLOWED;
    }
    const size = share && share.until > now ? share.next : 1;
    let consumed: number;
    let msBeforeNext: number;
    let rejected: RateLimiterRes | null = null;
    try {
      const res = await this.limiter.consume(key, size);
      consumed = res.consumedPoints;
      msBeforeNext = res.msBeforeNext;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      rejected = error;
      consumed = error.consumedPoints;
      msBeforeNext = error.msBeforeNext;
    }
    const points = this.limiter.points;
    const granted = Math.max(0, Math.min(size, points - (consumed - size)));
    const left = Math.max(0, points - consumed);
    this.remember(key, {
      left: Math.max(0, granted - 1),
      until: Date.now() + msBeforeNext,
      next: Math.max(1, Math.min(this.maxShare, Math.floor(left / 16))),
    });
    // Without a rejection the whole share was under the limit (granted = size).
    return granted > 0 || rejected === null ? ALLOWED : refused(rejected);
  }

  private remember(key: string, share: { left: number; until: number; next: number }): void {
    this.shares.delete(key);
    if (this.shares.size >= MAX_SHARES) {
      const now = Date.now();
      for (const [other, held] of this.shares) {
        if (held.until > now && this.shares.size < MAX_SHARES) break;
        this.shares.delete(other);
      }
    }
    this.shares.set(key, share);
  }
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
  const maxShare = limits.ONCEBOARD_RATE_LIMIT_SHARE ?? 1;
  const tokens = new LocalShares(limiter("token", limits.ONCEBOARD_RATE_LIMIT_PER_MINUTE), maxShare);
  const addresses = new LocalShares(limiter("address", limits.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE), maxShare);
  // A credential the auth cache holds skips the address's check (lib/auth/guard.ts), so the moment
  // an address's unknown credentials use up its limit, every console process is told to forget what
  // it holds: its next request with a good token is checked, and refused, like any other. The attempt
  // that reaches the limit tells, and the next three (one lost in transit does not leave the block unsaid).
  const credentialAttempt = async (address: string | null): Promise<RateDecision> => {
    let res: RateLimiterRes;
    let allowed = true;
    try {
      res = await credentials.consume(addressKey(address));
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      res = error;
      allowed = false;
    }
    // The address is blocked from the attempt that reaches the limit (mayPresentCredentials).
    if (res.consumedPoints >= credentials.points && res.consumedPoints <= credentials.points + 3) {
      authChanged();
      await pool.query("SELECT pg_notify($1, '')", [AUTH_CHANGED_CHANNEL]);
    }
    return allowed ? ALLOWED : refused(res);
  };
  return {
    signInAttempt: credentialAttempt,
    badCredential: credentialAttempt,
    async mayPresentCredentials(address) {
      const res = await credentials.get(addressKey(address));
      return res && res.consumedPoints >= credentials.points ? refused(res) : ALLOWED;
    },
    async authenticatedRequest(principalKey, address) {
      const byToken = await tokens.take(principalKey);
      if (!byToken.allowed) return byToken;
      return addresses.take(addressKey(address));
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
    config.ONCEBOARD_RATE_LIMIT_SHARE,
  ].join(":");
  if (globalThis.__onceboardRateLimits?.source !== source) {
    globalThis.__onceboardRateLimits = { source, limits: createRateLimits(getPool(), config.ONCEBOARD_SCHEMA, config) };
  }
  return globalThis.__onceboardRateLimits.limits;
}
