import { z } from "zod";
import {
  cursorParam,
  fromBeforeTo,
  instant,
  listingFields,
  nextCursor,
  nullableInstant,
  tenantParam,
} from "../../console/common-contract";
import { safeText } from "../../fields";
import { listedViolation } from "../violations/contract";
import { DELIVERY_ANSWERS, EFFECT_STATUSES, TIMELINE_LIMIT } from "./effects-types";

/** The contract of /api/v1/effects, /api/v1/effects/{key} and its release: queries, path and answers. */

const status = z.enum(EFFECT_STATUSES);

/** ?tenant= alone (the detail and the release). */
export const tenantQuery = z.object({ tenant: tenantParam });

/** The path's key, URL-encoded as one segment (lib/features/keys-and-effects/effect-key.ts decodes it exactly once). */
export const effectKeyPath = z.object({
  key: safeText(255, 1).meta({
    description:
      'The effect key, URL-encoded as one path segment (encodeURIComponent: "/" → %2F, "%" → %25, "?" → %3F, "#" → %23).',
  }),
});

/** GET /api/v1/effects query. */
export const effectSearchQuery = z
  .object({
    tenant: tenantParam,
    q: safeText(255)
      .optional()
      .meta({ description: 'A key prefix or fragment, case-insensitive: "inv-123" finds "settle:inv-123"' }),
    status: status.optional(),
    jobType: safeText(255, 1).optional(),
    cursor: cursorParam,
    ...listingFields({ max: 200, default: 50 }),
  })
  .superRefine(fromBeforeTo);

/** One row of a search result. */
const effectSummary = z.object({
  tenant: z.string(),
  key: z.string(),
  jobType: z.string(),
  status,
  policy: z.string(),
  attempt: z.number().int(),
  createdAt: instant,
  completedAt: nullableInstant,
  duplicateCount: z.number().int(),
  firstMessageId: z.string().nullable(),
  stuck: z.boolean().meta({ description: "In progress with its lease run out: the detail and the list both call it stuck" }),
});
export type EffectSummary = z.infer<typeof effectSummary>;

export const effectSearchResponse = z.object({
  tenant: z
    .string()
    .nullable()
    .meta({ description: "The tenant searched; null for a platform search across every tenant (each row names its own)" }),
  effects: z.array(effectSummary),
  nextCursor,
});
export type EffectSearchResponse = z.infer<typeof effectSearchResponse>;

/** Another step of the same job: an effect sharing this one's first message id. */
const jobStep = effectSummary.omit({ tenant: true, firstMessageId: true, stuck: true });
export type JobStep = z.infer<typeof jobStep>;

/** "ran once here · 1 payment at Stripe (pi_…) · reconciled 4 min ago", and whether that is an alarm. */
const providerSide = z.object({
  provider: z.string(),
  label: z.string().meta({ description: 'The provider\'s name as people know it ("Stripe")' }),
  text: z.string(),
  tone: z.enum(["ok", "warning", "danger"]).meta({
    description:
      "danger: the provider holds more than one object for the key, or none; warning: another disagreement; ok: they agree",
  }),
  objectIds: z.array(z.string()).meta({ description: "The provider's objects for the key" }),
  reconciledAt: nullableInstant.meta({
    description: "When the run that covered the key completed; null when only a finding names it",
  }),
  findingIds: z.array(z.string()).meta({ description: "The open or acknowledged findings about this key" }),
});
export type ProviderSide = z.infer<typeof providerSide>;

/** One delivery of the key, as its worker recorded it (lib/idempotency/timeline.ts). */
const timelineDelivery = z.object({
  deliveredAt: instant.meta({ description: "When the database answered the claim" }),
  answer: z.enum(DELIVERY_ANSWERS).meta({
    description:
      "What the claim answered: claimed, duplicate, waited (found it in flight, waited, got the outcome), in_flight (the wait ran out), takeover (an expired lease), retry (a failed attempt), abandoned, key_reuse, beyond_retention",
  }),
  messageId: z.string().nullable(),
  deliveryAttempt: z.number().int().nullable().meta({ description: "The broker's delivery count, when the adapter passed one" }),
  effectAttempt: z.number().int().meta({ description: "The effect's attempt after this claim (a takeover or retry: one more)" }),
  worker: z.string().meta({ description: "The worker that asked (its workerId)" }),
  claimMs: z.number().meta({ description: "How long the claim took, the wait for an in-flight copy included" }),
  gapSeconds: z
    .number()
    .nullable()
    .meta({ description: "Seconds since the delivery listed before it; null for the first listed" }),
  first: z.boolean().meta({ description: "The delivery that created the effect" }),
});
export type TimelineDelivery = z.infer<typeof timelineDelivery>;

export const effectDetail = z.object({
  tenant: z.string(),
  key: z.string(),
  jobType: z.string(),
  status,
  policy: z.string(),
  attempts: z.number().int().meta({ description: "How many times a worker claimed it (1 = ran once)" }),
  outcome: z.unknown().meta({ description: "The stored outcome, after the redaction hook" }),
  error: z.string().nullable(),
  providerKey: z.string().meta({ description: "The idempotency key sent to third parties (derived from tenant + key)" }),
  firstMessageId: z.string().nullable(),
  lastMessageId: z.string().nullable(),
  createdAt: instant,
  completedAt: nullableInstant,
  updatedAt: instant,
  duplicateCount: z.number().int(),
  lastDuplicateAt: nullableInstant,
  lastDuplicateGapSeconds: z.number().nullable().meta({ description: "Seconds from the first claim to the last duplicate" }),
  owner: z.string().nullable().meta({ description: "While in progress: who holds it" }),
  leaseUntil: nullableInstant,
  stuck: z
    .boolean()
    .meta({ description: "in_progress with an expired lease: a retry may take it over, or an operator release it" }),
  verdict: z.string().meta({ description: '"ran once, 3 duplicates suppressed, last 49 s after the first"' }),
  providerSide: providerSide.nullable().meta({
    description:
      "The provider's side, when the key's job type is reconciled with a provider and a completed run covered the key's creation time (or a finding names it); null otherwise",
  }),
  steps: z.array(jobStep).meta({ description: "The job's steps (this one included), oldest first" }),
  violations: z.array(listedViolation).meta({ description: "This key's own uncaught unique violations, newest first" }),
  timeline: z.array(timelineDelivery).meta({
    description: `The effect's deliveries, oldest first (newest last): the newest ${TIMELINE_LIMIT} when there are more`,
  }),
  timelineTotal: z.number().int().meta({ description: "How many deliveries were recorded in all" }),
});
export type EffectDetail = z.infer<typeof effectDetail>;

export const releaseResponse = z.object({
  released: z.literal(true),
  key: z.string(),
  status: z.literal("failed"),
  message: z.string(),
});
export type ReleaseResponse = z.infer<typeof releaseResponse>;
