import type { Queryable } from "../../../db/types";
import { seedDeliveries } from "./seed-deliveries";

/**
 * Effects in every state but stuck, and key-reuse refusals, for the States page's tests (API,
 * components, browser), in two tenants: each tenant's own strings, so a read that leaks shows it.
 * Recent (the last hours: inside every default window, every tenant's 7 days included), and named
 * apart from the Keys seed (no "stuck", no "ord-e2e"), so the Keys and Overview tests keep their
 * counts; the stuck ones are the Keys seed's.
 */
export const STATES_SEED = {
  tenants: ["acme", "globex"] as const,
  jobType: "charge-card",
  failedKey: (tenant: string) => `charge:st-${tenant}-declined`,
  /** The failed step's error as the library stored it: redacted when shown (the e-mail address). */
  failedError: (tenant: string) => `card declined for billing-${tenant}@example.com after 3 attempts`,
  failedErrorShown: "card declined for [email] after 3 attempts",
  failedAttempts: 3,
  abandonedKey: (tenant: string) => `email:st-${tenant}-receipt`,
  abandonedError: "abandoned: lease of attempt 1 (worker-gone) expired",
  liveKey: (tenant: string) => `charge:st-${tenant}-running`,
  completedKey: (tenant: string) => `charge:st-${tenant}-paid`,
  /** The refused messages of the completed key: its key came again with another payload. */
  reusedMessageIds: (tenant: string) => [`msg-st-${tenant}-reuse-1`, `msg-st-${tenant}-reuse-2`],
} as const;

/** Seeds STATES_SEED; needs the effects and timeline partitions of today. */
export async function seedStates(db: Queryable, now: Date = new Date()): Promise<void> {
  const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
  const s = STATES_SEED;
  for (const tenant of s.tenants) {
    await db.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id,
                            last_message_id, error, outcome, created_at, updated_at, completed_at)
       VALUES ($1, $2, $3, 'failed', 'external', $4, NULL, NULL, $2, $2, $5, NULL, $9, $10, NULL),
              ($1, $6, 'send-receipt', 'abandoned', 'at_most_once', 2, NULL, NULL, $6, $6, $11, NULL, $9, $10, NULL),
              ($1, $7, $3, 'in_progress', 'external', 1, 'worker-live', $12, $7, $7, NULL, NULL, $10, $10, NULL),
              ($1, $8, $3, 'completed', 'external', 1, NULL, NULL, $8, $8, NULL, '{"paid":true}', $9, $9, $9)`,
      [
        tenant,
        s.failedKey(tenant),
        s.jobType,
        s.failedAttempts,
        s.failedError(tenant),
        s.abandonedKey(tenant),
        s.liveKey(tenant),
        s.completedKey(tenant),
        ago(120),
        ago(90),
        s.abandonedError,
        new Date(now.getTime() + 3_600_000),
      ],
    );
    await seedDeliveries(db, [
      {
        tenant,
        key: s.completedKey(tenant),
        at: ago(120),
        answer: "claimed",
        jobType: s.jobType,
        messageId: s.completedKey(tenant),
        deliveryAttempt: 1,
        effectAttempt: 1,
        worker: `worker-${tenant}-1`,
        claimMs: 1,
        effectCreatedAt: ago(120),
      },
      ...s.reusedMessageIds(tenant).map((messageId, i) => ({
        tenant,
        key: s.completedKey(tenant),
        at: ago(60 - i * 10),
        answer: "key_reuse",
        jobType: s.jobType,
        messageId,
        deliveryAttempt: 1,
        effectAttempt: 1,
        worker: `worker-${tenant}-1`,
        claimMs: 1,
        effectCreatedAt: ago(120),
      })),
    ]);
  }
}
