/** What /api/v1/effects answers (shared by route handlers and the Keys page's components). */

import type { UncaughtViolation } from "./violations-types";

export const EFFECT_STATUSES = ["in_progress", "completed", "failed", "abandoned"] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

/**
 * A platform search that names no tenant looks this far back (the tenant's search, 90 days): no
 * index spans tenants, so the days bound what it reads. Shared with the Keys page, which says so.
 */
export const CROSS_TENANT_SEARCH_DAYS = 7;

/** One row of a search result. */
export interface EffectSummary {
  tenant: string;
  key: string;
  jobType: string;
  status: EffectStatus;
  policy: string;
  attempt: number;
  createdAt: string;
  completedAt: string | null;
  duplicateCount: number;
  firstMessageId: string | null;
  /** In progress with its lease run out: the detail and the list both call it stuck. */
  stuck: boolean;
}

export interface EffectSearchResponse {
  /** The tenant searched; null for a platform search across every tenant (each row names its own). */
  tenant: string | null;
  effects: EffectSummary[];
  /** Pass as ?cursor= for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

/** Another step of the same job: an effect sharing this one's first message id. */
export interface JobStep {
  key: string;
  jobType: string;
  status: EffectStatus;
  policy: string;
  attempt: number;
  createdAt: string;
  completedAt: string | null;
  duplicateCount: number;
}

export interface EffectDetail {
  tenant: string;
  key: string;
  jobType: string;
  status: EffectStatus;
  policy: string;
  /** How many times a worker claimed it (1 = ran once; more = taken over or retried). */
  attempts: number;
  /** The stored outcome, after the redaction hook. */
  outcome: unknown;
  error: string | null;
  /** The idempotency key sent to third parties (derived from tenant + key). */
  providerKey: string;
  firstMessageId: string | null;
  lastMessageId: string | null;
  createdAt: string;
  completedAt: string | null;
  updatedAt: string;
  duplicateCount: number;
  lastDuplicateAt: string | null;
  /** Seconds from the first claim to the last duplicate delivery. */
  lastDuplicateGapSeconds: number | null;
  /** While in progress: who holds it and until when. */
  owner: string | null;
  leaseUntil: string | null;
  /** in_progress with an expired lease: a retry may take it over (or an operator may release it). */
  stuck: boolean;
  /** "ran once, 3 duplicates suppressed, last 49 s after the first". */
  verdict: string;
  /** The job's steps (this one included), oldest first. */
  steps: JobStep[];
  /** This key's own uncaught unique violations, newest first. */
  violations: UncaughtViolation[];
}

export interface ReleaseResponse {
  released: true;
  key: string;
  status: "failed";
  message: string;
}
