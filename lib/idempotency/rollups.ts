import { type EffectsDb, sqlFor } from "./db";
import type { Logger } from "./logger";
import { GAP_BUCKET_BOUNDS } from "./metrics";
import { PeriodicFlush } from "./periodic-flush";
import { CLAIM_DURATION_BUCKETS } from "./states";
import type { StatCounts, Store } from "./store";
import { storeFor } from "./store-for";

interface StatRow extends StatCounts {
  id: string;
  minute: number;
  jobType: string;
  /** One count per bucket of GAP_BUCKET_BOUNDS, then +Inf. */
  gapBuckets: number[];
  /** One count per bucket of CLAIM_DURATION_BUCKETS, then +Inf (claim_latency_minute). */
  claimBuckets: number[];
}

/**
 * One occurrence of an uncaught violation, for the per-minute rollup's row type. The rollup now only
 * counts: the keys live in uncaught_violation_keys (violations.ts), one row per occurrence.
 */
export interface ViolationOccurrence {
  tenant: string;
  key: string;
  messageId: string | null;
}

interface ViolationRow {
  minute: number;
  jobType: string;
  constraint: string;
  count: number;
  /** Left null: each violation's key is its own row of uncaught_violation_keys (violations.ts), never one per group. */
  last: ViolationOccurrence | null;
}

const EMPTY: StatCounts = {
  claims: 0,
  suppressed: 0,
  inFlight: 0,
  takeovers: 0,
  abandoned: 0,
  failed: 0,
  keyReuse: 0,
  uncaughtViolations: 0,
  deliveries: 0,
  redeliveries: 0,
  messageIdKeys: 0,
  claimSecondsSum: 0,
  gapSecondsSum: 0,
  claimsBeyondRetention: 0,
};

/** Index of the bucket a gap falls in: the first bound >= gap (Prometheus `le`), else +Inf. */
export function gapBucketIndex(seconds: number): number {
  const i = GAP_BUCKET_BOUNDS.findIndex((bound) => seconds <= bound);
  return i === -1 ? GAP_BUCKET_BOUNDS.length : i;
}

// ---- Claim-latency buckets and the per-tenant hourly counters (tables from the library's
// migrations; the coarser levels above them, 10 minutes to a day, are kept by triggers, so nothing
// here writes them).

/** Index of the claim-duration bucket (CLAIM_DURATION_BUCKETS, then +Inf) a duration falls in. */
function claimBucketIndex(seconds: number): number {
  const i = CLAIM_DURATION_BUCKETS.findIndex((bound) => seconds <= bound);
  return i === -1 ? CLAIM_DURATION_BUCKETS.length : i;
}

interface TenantSuppressionRow {
  hour: number;
  tenant: string;
  jobType: string;
  count: number;
}

interface TenantViolationRow extends TenantSuppressionRow {
  constraint: string;
  lastKey: string;
  lastSeen: number;
}

/**
 * Per-minute rollups kept in memory and flushed to the store on an interval and on close().
 * A failed flush keeps its counts (merged back) for the next one; recording never touches the
 * database, so a job never fails because of stats.
 */
export class Rollups extends PeriodicFlush {
  private stats = new Map<string, StatRow>();
  private violations = new Map<string, ViolationRow>();

  constructor(
    private readonly db: EffectsDb,
    private readonly options: {
      marked: boolean;
      schema?: string;
      /** Where the rows go (each engine's upserts); default: the store for `db`'s engine. */
      store?: Store;
      logger: Logger;
      onFlushFailure?: (error: unknown) => void;
      now?: () => number;
    },
  ) {
    super();
    this.store = options.store ?? storeFor(db);
  }

  private readonly store: Store;

  private minute(): number {
    const now = this.options.now?.() ?? Date.now();
    return now - (now % 60_000);
  }

  // The last row used (always one in this.stats: cleared when a flush swaps the map), so the hot
  // path (every claim) skips the id string and the map lookup.
  private last: StatRow | undefined;

  private row(jobType: string, minute = this.minute()): StatRow {
    const last = this.last;
    if (last && last.minute === minute && last.jobType === jobType) return last;
    const id = `${minute}\u0001${jobType}`;
    let row = this.stats.get(id);
    if (!row) {
      row = {
        ...EMPTY,
        id,
        minute,
        jobType,
        gapBuckets: new Array(GAP_BUCKET_BOUNDS.length + 1).fill(0),
        claimBuckets: new Array(CLAIM_DURATION_BUCKETS.length + 1).fill(0),
      };
      this.stats.set(id, row);
    }
    this.last = row;
    return row;
  }

  add(jobType: string, delta: Partial<StatCounts>): void {
    const row = this.row(jobType);
    for (const name in delta) row[name as keyof StatCounts] += delta[name as keyof StatCounts] ?? 0;
  }

  /** One claim and its duration: the same as add(jobType, { claims: 1, claimSecondsSum }), without the object. */
  addClaim(jobType: string, seconds: number): void {
    const row = this.row(jobType);
    row.claims += 1;
    row.claimSecondsSum += seconds;
    const i = claimBucketIndex(seconds);
    row.claimBuckets[i] = (row.claimBuckets[i] ?? 0) + 1;
  }

  observeGap(jobType: string, seconds: number): void {
    const row = this.row(jobType);
    const i = gapBucketIndex(seconds);
    row.gapBuckets[i] = (row.gapBuckets[i] ?? 0) + 1;
    row.gapSecondsSum += seconds;
  }

  addViolation(jobType: string, constraint: string, occurrence: ViolationOccurrence | null = null): void {
    const minute = this.minute();
    const id = `${minute}\u0001${jobType}\u0001${constraint}`;
    const row = this.violations.get(id) ?? { minute, jobType, constraint, count: 0, last: null };
    row.count += 1;
    if (occurrence) row.last = occurrence;
    this.violations.set(id, row);
  }

  get pending(): number {
    return this.stats.size + this.violations.size + this.tenantSuppressions.size + this.tenantViolations.size;
  }

  protected async flushOnce(): Promise<boolean> {
    const stats = this.stats;
    const violations = this.violations;
    this.stats = new Map();
    this.last = undefined;
    this.violations = new Map();
    const tenantOk = await this.flushTenants();
    if (stats.size === 0 && violations.size === 0) return tenantOk;
    const sql = sqlFor(this.db, false, this.options.schema);
    const marked = this.options.marked;
    let ok = tenantOk;
    const store = this.store;
    for (const [id, r] of stats) {
      try {
        const counts: StatCounts = { ...EMPTY };
        for (const name of Object.keys(EMPTY) as (keyof StatCounts)[]) counts[name] = r[name];
        await store.addStats(
          sql,
          { minute: r.minute, jobType: r.jobType, counts, gapBuckets: r.gapBuckets, claimBuckets: r.claimBuckets },
          marked,
        );
      } catch (error) {
        ok = false;
        this.mergeStats(id, r);
        this.failed(error);
      }
    }
    for (const [id, r] of violations) {
      try {
        await store.addViolationCounts(sql, r, marked);
      } catch (error) {
        ok = false;
        const existing = this.violations.get(id);
        if (existing) {
          existing.count += r.count;
          existing.last ??= r.last;
        } else this.violations.set(id, r);
        this.failed(error);
      }
    }
    return ok;
  }

  private mergeStats(id: string, r: StatRow): void {
    const existing = this.stats.get(id);
    if (!existing) {
      this.stats.set(id, r);
      return;
    }
    for (const name of Object.keys(EMPTY) as (keyof StatCounts)[]) existing[name] += r[name];
    r.gapBuckets.forEach((count, i) => {
      existing.gapBuckets[i] = (existing.gapBuckets[i] ?? 0) + count;
    });
    r.claimBuckets.forEach((count, i) => {
      existing.claimBuckets[i] = (existing.claimBuckets[i] ?? 0) + count;
    });
  }

  // ---- The tenant dimension, for the rare counters only (suppressions, uncaught
  // violations), per hour. A map increment per event; one upsert per (hour, tenant, job type)
  // with events per flush. Tenants with no events cost nothing. See docs/operations.md.
  private tenantSuppressions = new Map<string, TenantSuppressionRow>();
  private tenantViolations = new Map<string, TenantViolationRow>();

  private hour(): number {
    const now = this.options.now?.() ?? Date.now();
    return now - (now % 3_600_000);
  }

  addTenantSuppression(tenant: string, jobType: string): void {
    const hour = this.hour();
    const id = `${hour}\u0001${tenant}\u0001${jobType}`;
    const row = this.tenantSuppressions.get(id);
    if (row) row.count += 1;
    else this.tenantSuppressions.set(id, { hour, tenant, jobType, count: 1 });
  }

  addTenantViolation(tenant: string, jobType: string, constraint: string, key: string): void {
    const hour = this.hour();
    const id = `${hour}\u0001${tenant}\u0001${jobType}\u0001${constraint}`;
    const at = this.options.now?.() ?? Date.now();
    const row = this.tenantViolations.get(id);
    if (row) {
      row.count += 1;
      row.lastKey = key;
      row.lastSeen = at;
    } else this.tenantViolations.set(id, { hour, tenant, jobType, constraint, count: 1, lastKey: key, lastSeen: at });
  }

  private async flushTenants(): Promise<boolean> {
    const suppressions = this.tenantSuppressions;
    const violations = this.tenantViolations;
    if (suppressions.size === 0 && violations.size === 0) return true;
    this.tenantSuppressions = new Map();
    this.tenantViolations = new Map();
    const sql = sqlFor(this.db, false, this.options.schema);
    let ok = true;
    for (const [id, r] of suppressions) {
      try {
        await this.store.addTenantSuppressions(sql, r, this.options.marked);
      } catch (error) {
        ok = false;
        const existing = this.tenantSuppressions.get(id);
        if (existing) existing.count += r.count;
        else this.tenantSuppressions.set(id, r);
        this.failed(error);
      }
    }
    for (const [id, r] of violations) {
      try {
        await this.store.addTenantViolations(sql, r, this.options.marked);
      } catch (error) {
        ok = false;
        const existing = this.tenantViolations.get(id);
        if (existing) existing.count += r.count;
        else this.tenantViolations.set(id, r);
        this.failed(error);
      }
    }
    return ok;
  }
  // ---- end of the tenant dimension

  private failed(error: unknown): void {
    this.options.onFlushFailure?.(error);
    this.options.logger.warn({ err: error }, "rollup flush failed; counts kept for the next flush");
  }
}
