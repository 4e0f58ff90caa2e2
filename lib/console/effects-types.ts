/** What /api/v1/effects answers (shared by route handlers and the Keys page's components). */

import type { UncaughtViolation } from "./violations-types";

export const EFFECT_STATUSES = ["in_progress", "completed", "failed", "abandoned"] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

/** One row of a search result. */
export interface EffectSummary {
  key: string;
  jobType: string;
  status: EffectStatus;
  policy: string;
  attempt: number;
  createdAt: string;
  completedAt: string | null;
  duplicateCount: number;
  firstMessageId: string | null;
}

export interface EffectSearchResponse {
  tenant: string;
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
  /**
   * The provider's side, when the key's job type is reconciled with a provider and a completed run
   * covered the key's creation time (or found something about it); null otherwise.
   */
  providerSide: ProviderSide | null;
  /** The job's steps (this one included), oldest first. */
  steps: JobStep[];
  /** This key's own uncaught unique violations, newest first. */
  violations: UncaughtViolation[];
}

/** "ran once here · 1 payment at Stripe (pi_…) · reconciled 4 min ago", and whether that is an alarm. */
export interface ProviderSide {
  provider: string;
  /** The provider's name as people know it ("Stripe"). */
  label: string;
  text: string;
  /** danger: the provider holds more than one object for the key, or none; warning: another disagreement; ok: they agree. */
  tone: "ok" | "warning" | "danger";
  /** The provider's objects for the key (the outcome's recorded id, or the finding's). */
  objectIds: string[];
  /** When the run that covered the key completed; null when only a finding names it. */
  reconciledAt: string | null;
  /** The open or acknowledged findings about this key (their ids, for a link to the Reconciliation page). */
  findingIds: string[];
}

export interface ReleaseResponse {
  released: true;
  key: string;
  status: "failed";
  message: string;
}
