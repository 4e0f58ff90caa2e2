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

/**
 * What one delivery's claim answered (lib/idempotency/timeline.ts): claimed, duplicate, waited
 * (found it in flight, waited, got the outcome), in_flight (the wait ran out), takeover (the
 * owner's lease had expired), retry (the previous attempt failed), abandoned, key_reuse,
 * beyond_retention.
 */
export const DELIVERY_ANSWERS = [
  "claimed",
  "duplicate",
  "waited",
  "in_flight",
  "takeover",
  "retry",
  "abandoned",
  "key_reuse",
  "beyond_retention",
] as const;
export type DeliveryAnswer = (typeof DELIVERY_ANSWERS)[number];

/** One delivery of the key, as its worker recorded it (delivery_timeline). */
export interface Delivery {
  /** When the database answered the claim. */
  deliveredAt: string;
  answer: DeliveryAnswer;
  messageId: string | null;
  /** The broker's delivery count, when the adapter passed one. */
  deliveryAttempt: number | null;
  /** The effect's attempt after this claim (a takeover or retry: one more). */
  effectAttempt: number;
  worker: string;
  /** How long the claim took, the wait for an in-flight copy included. */
  claimMs: number;
  /** Seconds since the delivery shown before it; null for the first one shown. */
  gapSeconds: number | null;
  /** The delivery that claimed the effect first (it created the effect). */
  first: boolean;
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
  /** Every delivery of this effect, oldest first: the newest TIMELINE_LIMIT when there are more. */
  timeline: Delivery[];
  /** How many deliveries were recorded in all (more than timeline.length when it was cut). */
  timelineTotal: number;
}

/** The most deliveries a key's detail carries (the newest). */
export const TIMELINE_LIMIT = 200;

export interface ReleaseResponse {
  released: true;
  key: string;
  status: "failed";
  message: string;
}
