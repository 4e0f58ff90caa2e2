import { scopeOfStoredAction } from "../../auth/action-scope";
import type { Principal } from "../../auth/auth-types";
import { loadConfig } from "../../config";
import { effectsStore, type MysqlEffectsStore } from "../../console/effects-store";
import type { Prisma } from "../../db/generated/client";
import { schemaNameOf } from "../../idempotency/admin";
import { releasableSql } from "../../idempotency/states";
import { keyContainsFragment } from "../keys-and-effects/key-fragment";
import { releaseInTransaction, releaseOnMysql } from "../keys-and-effects/release-effect";
import type { FindingSummary } from "../reconciliation/contract";
import { changeFindingStateInTransaction, FindingStateRefusedError } from "../reconciliation/finding-state";
import {
  FINDING_FILTER_WHERE,
  FINDING_ORDER,
  FINDING_SUMMARY_COLUMNS,
  type FindingRow,
  findingFilterValues,
  toFindingSummary,
} from "../reconciliation/list-findings";
import type { BulkActionKind, BulkFilters, BulkFindingsFilter, BulkReleaseFilter } from "./bulk-types";
import type { StuckClaimSample } from "./contract";

type RawQuery = Pick<Prisma.TransactionClient, "$queryRawUnsafe">;

/** One item to apply: the action's principal, tenant, address and note. */
export interface ApplyInput {
  principal: Principal;
  tenant: string | null;
  key: string;
  ip: string | null;
  actionId: string;
  note: string | null;
}

/**
 * What each kind of bulk action matches and what it does to one item. A kind is an entry here, its
 * value in bulk_actions_kind_check and a route that starts it: the actions table, the cap, the
 * runner, cancel and resume are shared (lib/features/bulk-actions/bulk-actions.ts, lib/features/bulk-actions/bulk-runner.ts).
 * `tenant` is the action's: one tenant, or null for a platform action over every tenant (a kind
 * that needs one tenant is only ever started with one; bulk_actions_release_tenant_check).
 */
export interface BulkKind<F, S> {
  /** The filter as bulk_actions.filter keeps it (and the API shows it). */
  filterJson(filter: F): Record<string, string | null>;
  /** How many items match (up to `limit`), and the first `sample`, in the order they would run. */
  match(
    db: RawQuery,
    input: { tenant: string | null; filter: F; limit: number; sample: number },
  ): Promise<{ count: number; sample: S[] }>;
  /** Inserts the matched items (seq from 1, in the order they will run), at most `limit`; returns how many. */
  snapshot(
    tx: Prisma.TransactionClient,
    input: { actionId: string; tenant: string | null; filter: F; limit: number },
  ): Promise<number>;
  /** Applies the action to one item inside the runner's transaction; "ok" or the refusal's reason. */
  apply(tx: Prisma.TransactionClient, input: ApplyInput): Promise<string>;
  /**
   * Where the items live on another server than the console's PostgreSQL (a MySQL effects store):
   * how one item is applied there, outside the runner's transaction, under `requestId` (the same
   * for every run of the item, so a resumed item repeats harmlessly); null when `apply` runs inside
   * the runner's transaction instead.
   */
  applyElsewhere?(): ((input: ApplyInput & { requestId: string }) => Promise<string>) | null;
  /** Why a start is refused: past the cap, and nothing matched. */
  overCapMessage(cap: number): string;
  nothingMessage: string;
}

/** A table of the library's schema, qualified: raw SQL through Prisma has no search_path to lean on. */
export function consoleTable(name: "effects" | "bulk_actions" | "bulk_action_items" | "reconciliation_findings"): string {
  return `${schemaNameOf(loadConfig().ONCEBOARD_SCHEMA)}.${name}`;
}

const effectsTable = () => consoleTable("effects");

function releaseTenant(tenant: string | null): string {
  if (tenant === null) throw new Error("a bulk release names its tenant (bulk_actions_release_tenant_check)");
  return tenant;
}

// A claim a bulk release may release: the library's rule (releasableSql: stuck, not at most once,
// which the library never releases). The Keys page's key fragment (strpos: "%" and "_" are
// literal) and job type narrow it. Oldest lease first.
const stuckWhere = (effects: string) => `
  FROM ${effects}
 WHERE tenant_id = $1 AND ${releasableSql("now()")}
   AND ($2::text IS NULL OR ${keyContainsFragment("lower($2)")})
   AND ($3::text IS NULL OR job_type = $3)`;

/** The MySQL effects store when it is configured, else null (the effects are in the console's PostgreSQL). */
function mysqlStore(): MysqlEffectsStore | null {
  const store = effectsStore();
  return store.engine === "mysql" ? store : null;
}

// stuckWhere on a MySQL store: releasableSql with `now` bound once (?), the key fragment as a
// case-blind substring (LOCATE on both lowered: "%" and "_" stay literal) and the job type.
// Params: tenant, now, q (twice), job type (twice).
const STUCK_WHERE_MYSQL = `
  FROM effects
 WHERE tenant_id = ? AND ${releasableSql("?")}
   AND (? IS NULL OR LOCATE(LOWER(?), LOWER(\`key\`)) > 0)
   AND (? IS NULL OR job_type = ?)`;

const stuckArgsMysql = (tenant: string | null, now: Date, filter: BulkReleaseFilter) => [
  releaseTenant(tenant),
  now,
  filter.q,
  filter.q,
  filter.jobType,
  filter.jobType,
];

/** matchStuckClaims on a MySQL store. */
async function matchStuckClaimsMysql(
  store: MysqlEffectsStore,
  input: { tenant: string | null; filter: BulkReleaseFilter; limit: number; sample: number },
): Promise<{ count: number; sample: StuckClaimSample[] }> {
  const args = stuckArgsMysql(input.tenant, new Date(), input.filter);
  const [counted, sample] = await Promise.all([
    store.db.query<{ n: number }>(`SELECT count(*) AS n FROM (SELECT 1 ${STUCK_WHERE_MYSQL} LIMIT ?) m`, [
      ...args,
      Math.trunc(input.limit),
    ]),
    store.db.query<{ key: string; job_type: string; attempt: number; owner: string | null; lease_until: Date }>(
      `SELECT \`key\`, job_type, attempt, owner, lease_until ${STUCK_WHERE_MYSQL} ORDER BY lease_until, \`key\` LIMIT ?`,
      [...args, Math.trunc(input.sample)],
    ),
  ]);
  return {
    count: Number(counted[0]?.n ?? 0),
    sample: sample.map((r) => ({
      key: r.key,
      jobType: r.job_type,
      attempt: Number(r.attempt),
      owner: r.owner,
      leaseUntil: new Date(r.lease_until).toISOString(),
    })),
  };
}

/** How many keys a snapshot reads from a MySQL store per round trip. */
export const SNAPSHOT_PAGE_MYSQL = 500;

/**
 * The snapshot on a MySQL store: the selection read in keyset pages on (lease_until, key) — the
 * order the items run in, which the effects_status_lease_until_idx serves — with `now` fixed at the
 * start, and inserted into bulk_action_items in the console's transaction with seq in that order.
 * The key is unique per tenant, so the keyset neither repeats nor skips a row that stays selected;
 * a claim taken over or released meanwhile simply drops out (its lease moves past `now` or it is no
 * longer in progress), as it would from the PostgreSQL snapshot a moment later.
 */
async function snapshotStuckClaimsMysql(
  store: MysqlEffectsStore,
  tx: Prisma.TransactionClient,
  input: { actionId: string; tenant: string | null; filter: BulkReleaseFilter; limit: number },
): Promise<number> {
  const args = stuckArgsMysql(input.tenant, new Date(), input.filter);
  let after: { leaseUntil: Date; key: string } | null = null;
  let seq = 0;
  while (seq < input.limit) {
    const take = Math.min(SNAPSHOT_PAGE_MYSQL, input.limit - seq);
    const page: { key: string; lease_until: Date }[] = await store.db.query<{ key: string; lease_until: Date }>(
      `SELECT \`key\`, lease_until ${STUCK_WHERE_MYSQL}
         ${after ? "AND (lease_until > ? OR (lease_until = ? AND `key` > ?))" : ""}
       ORDER BY lease_until, \`key\` LIMIT ?`,
      [...args, ...(after ? [after.leaseUntil, after.leaseUntil, after.key] : []), take],
    );
    if (page.length === 0) break;
    await tx.$executeRawUnsafe(
      `INSERT INTO ${consoleTable("bulk_action_items")} (action_id, seq, key)
       SELECT $1::uuid, $2::int + ord, key FROM unnest($3::text[]) WITH ORDINALITY AS k(key, ord)`,
      input.actionId,
      seq,
      page.map((r) => r.key),
    );
    seq += page.length;
    const last = page[page.length - 1] as { key: string; lease_until: Date };
    after = { leaseUntil: last.lease_until, key: last.key };
    if (page.length < take) break;
  }
  return seq;
}

/** How many stuck claims match (up to `limit`), and the first few. */
async function matchStuckClaims(
  db: RawQuery,
  input: { tenant: string | null; filter: BulkReleaseFilter; limit: number; sample: number },
): Promise<{ count: number; sample: StuckClaimSample[] }> {
  const where = stuckWhere(effectsTable());
  const args = [releaseTenant(input.tenant), input.filter.q, input.filter.jobType];
  const [counted, sample] = await Promise.all([
    db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM (SELECT 1 ${where} LIMIT ${Math.trunc(input.limit)}) m`,
      ...args,
    ),
    db.$queryRawUnsafe<{ key: string; job_type: string; attempt: number; owner: string | null; lease_until: Date }[]>(
      `SELECT key, job_type, attempt, owner, lease_until ${where} ORDER BY lease_until, key LIMIT ${Math.trunc(input.sample)}`,
      ...args,
    ),
  ]);
  return {
    count: counted[0]?.n ?? 0,
    sample: sample.map((r) => ({
      key: r.key,
      jobType: r.job_type,
      attempt: Number(r.attempt),
      owner: r.owner,
      leaseUntil: new Date(r.lease_until).toISOString(),
    })),
  };
}

const releaseStuckClaims: BulkKind<BulkReleaseFilter, StuckClaimSample> = {
  filterJson: (filter) => ({ q: filter.q, jobType: filter.jobType }),
  match(db, input) {
    const store = mysqlStore();
    return store ? matchStuckClaimsMysql(store, input) : matchStuckClaims(db, input);
  },
  async snapshot(tx, { actionId, tenant, filter, limit }) {
    const store = mysqlStore();
    if (store) return snapshotStuckClaimsMysql(store, tx, { actionId, tenant, filter, limit });
    return tx.$executeRawUnsafe(
      `INSERT INTO ${consoleTable("bulk_action_items")} (action_id, seq, key)
       SELECT $4::uuid, row_number() OVER (ORDER BY lease_until, key), key
         FROM (SELECT key, lease_until ${stuckWhere(effectsTable())} ORDER BY lease_until, key LIMIT ${Math.trunc(limit)}) m`,
      releaseTenant(tenant),
      filter.q,
      filter.jobType,
      actionId,
    );
  },
  async apply(tx, { principal, tenant, key, ip, actionId }) {
    // The library's release with its guards (a live lease, a completed or at-most-once effect is
    // refused), audited as the person who started the action, naming the action.
    const result = await releaseInTransaction(tx, {
      principal,
      tenant: releaseTenant(tenant),
      key,
      ip,
      detail: { bulkAction: actionId },
    });
    return typeof result === "number" ? "ok" : result.reason;
  },
  applyElsewhere() {
    const store = mysqlStore();
    if (!store) return null;
    // releaseOnMysql's audited release ("requested", the release under the item's request id, the
    // outcome), as the person who started the action, naming the action.
    return async ({ principal, tenant, key, ip, actionId, requestId }) => {
      const result = await releaseOnMysql(store, {
        principal,
        tenant: releaseTenant(tenant),
        key,
        ip,
        requestId,
        detail: { bulkAction: actionId },
      });
      return typeof result === "number" ? "ok" : result.reason;
    };
  },
  overCapMessage: (cap) =>
    `this filter matches more than ${cap} stuck claims (the cap per bulk action, BULK_ACTION_MAX_ITEMS): narrow it by key or job type`,
  nothingMessage: "no stuck claim matches this filter: nothing to release",
};

// Open findings of the action's tenant (null: every tenant's, the tenantless ones included — a
// platform action), through the findings list's own filter ($1–$8), newest last seen first as the
// page lists them.
const findingsScope = scopeOfStoredAction;
const openFindingValues = (tenant: string | null, filter: BulkFindingsFilter) =>
  findingFilterValues(findingsScope(tenant), { state: "open", ...filter });

const acknowledgeFindings: BulkKind<BulkFindingsFilter, FindingSummary> = {
  filterJson: (filter) => ({
    kind: filter.kind,
    provider: filter.provider,
    jobType: filter.jobType,
    from: filter.from?.toISOString() ?? null,
    to: filter.to?.toISOString() ?? null,
  }),
  async match(db, input) {
    const table = consoleTable("reconciliation_findings");
    const values = openFindingValues(input.tenant, input.filter);
    const [counted, sample] = await Promise.all([
      db.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${table} WHERE ${FINDING_FILTER_WHERE} LIMIT ${Math.trunc(input.limit)}) m`,
        ...values,
      ),
      db.$queryRawUnsafe<FindingRow[]>(
        `SELECT ${FINDING_SUMMARY_COLUMNS} FROM ${table} WHERE ${FINDING_FILTER_WHERE} ORDER BY ${FINDING_ORDER} LIMIT ${Math.trunc(input.sample)}`,
        ...values,
      ),
    ]);
    return { count: counted[0]?.n ?? 0, sample: sample.map(toFindingSummary) };
  },
  async snapshot(tx, { actionId, tenant, filter, limit }) {
    return tx.$executeRawUnsafe(
      `INSERT INTO ${consoleTable("bulk_action_items")} (action_id, seq, key)
       SELECT $9::uuid, row_number() OVER (ORDER BY ${FINDING_ORDER}), id::text
         FROM (SELECT id, last_seen_at FROM ${consoleTable("reconciliation_findings")}
                WHERE ${FINDING_FILTER_WHERE} ORDER BY ${FINDING_ORDER} LIMIT ${Math.trunc(limit)}) reconciliation_findings`,
      ...openFindingValues(tenant, filter),
      actionId,
    );
  },
  async apply(tx, { principal, tenant, key, ip, actionId, note }) {
    // The single acknowledge's own guarded change (only an open finding of the action's tenant),
    // audited as the person who started the action, naming the action.
    const result = await changeFindingStateInTransaction(tx, {
      principal,
      scope: findingsScope(tenant),
      id: key,
      action: "acknowledge",
      note: note ?? "",
      ip,
      detail: { bulkAction: actionId },
    });
    if (!(result instanceof FindingStateRefusedError)) return "ok";
    // Resolved or acknowledged meanwhile (or gone): left as it is.
    return result.code === "NOT_FOUND" ? "not_found" : "not_open";
  },
  overCapMessage: (cap) =>
    `this filter matches more than ${cap} open findings (the cap per bulk action, BULK_ACTION_MAX_ITEMS): narrow it by kind, provider, job type or time`,
  nothingMessage: "no open finding matches this filter: nothing to acknowledge",
};

export const BULK_KINDS: { [K in BulkActionKind]: BulkKind<BulkFilters[K], unknown> } = {
  release_stuck_claims: releaseStuckClaims,
  acknowledge_findings: acknowledgeFindings,
};
