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
import { isoInstant, safeText } from "../../fields";
import { CROSS_TENANT_SEARCH_DAYS, EFFECT_STATUSES, TENANT_SEARCH_DAYS } from "./effects-types";
import { EFFECT_STATES, STATES_PAGE_SIZE } from "./states-types";

/**
 * The contract of browse by state: /api/v1/effect-states (every state's count for a filter),
 * /api/v1/effect-states/{state} (one state's effects) and /api/v1/key-reuse-refusals (the
 * deliveries refused for key reuse). The three take the same filter, so the counts and the lists
 * they head agree.
 */

const state = z.enum(EFFECT_STATES);

/** The filter every read of the family takes: whose effects, which job type, created when. */
const stateFilterFields = {
  tenant: tenantParam,
  jobType: safeText(255, 1).optional(),
  from: isoInstant.optional().meta({
    description: `Created from (ISO 8601). Default: ${TENANT_SEARCH_DAYS} days ago for one tenant, ${CROSS_TENANT_SEARCH_DAYS} days ago for every tenant (a platform token naming none)`,
  }),
  to: isoInstant.optional().meta({ description: "Created before (ISO 8601). Default: a minute from now" }),
};

/** GET /api/v1/effect-states query. */
export const effectStatesQuery = z.object(stateFilterFields).superRefine(fromBeforeTo);

/** GET /api/v1/effect-states/{state} and /api/v1/key-reuse-refusals query: the filter and a page. */
export const stateListQuery = z
  .object({ ...stateFilterFields, cursor: cursorParam, limit: listingFields({ max: 200, default: STATES_PAGE_SIZE }).limit })
  .superRefine(fromBeforeTo);

/** The path of one state's list. */
export const effectStatePath = z.object({
  state: state.meta({ description: `One of ${EFFECT_STATES.join(", ")} (stuck: in progress with its lease run out)` }),
});

/** What every answer of the family says of the filter it applied: the window is the one counted and listed. */
const appliedFilter = {
  tenant: z
    .string()
    .nullable()
    .meta({ description: "The tenant read; null for a platform read across every tenant (each row names its own)" }),
  jobType: z.string().nullable(),
  from: instant.meta({ description: "Effects (deliveries, for key reuse) from this instant, inclusive" }),
  to: instant.meta({ description: "…to this one, exclusive" }),
  asOf: instant.meta({ description: "The instant leases were compared with: stuck means lease_until <= asOf" }),
};

export const effectStatesResponse = z.object({
  ...appliedFilter,
  states: z
    .array(z.object({ state, count: z.number().int() }))
    .meta({ description: "Every state, in the page's order; each effect of the filter is in exactly one" }),
  total: z.number().int().meta({ description: "The effects of the filter: the sum of the states' counts" }),
  keyReuse: z.number().int().meta({
    description:
      "Deliveries of the filter refused because their key first came with another payload (dead-lettered), as the delivery timeline recorded them",
  }),
});
export type EffectStatesResponse = z.infer<typeof effectStatesResponse>;

/** One effect of a state's list: what an on-call engineer decides from, the error of a failed one included. */
const stateEffect = z.object({
  tenant: z.string(),
  key: z.string(),
  jobType: z.string(),
  state,
  status: z.enum(EFFECT_STATUSES),
  policy: z.string(),
  attempts: z.number().int().meta({ description: "How many times a worker claimed it (1 = ran once)" }),
  error: z
    .string()
    .nullable()
    .meta({ description: "The step's last error as the library recorded it, after the redaction hook" }),
  owner: z.string().nullable().meta({ description: "While in progress (or stuck): the worker holding the claim" }),
  leaseUntil: nullableInstant.meta({ description: "While in progress (or stuck): when the claim's lease ends or ended" }),
  createdAt: instant,
  updatedAt: instant.meta({ description: "The last change: for a failed or abandoned effect, when it failed" }),
  completedAt: nullableInstant,
  firstMessageId: z.string().nullable(),
});
export type StateEffect = z.infer<typeof stateEffect>;

export const stateListResponse = z.object({
  ...appliedFilter,
  state,
  effects: z.array(stateEffect).meta({ description: "Newest created first, then by key (and tenant)" }),
  nextCursor,
});
export type StateListResponse = z.infer<typeof stateListResponse>;

/** One delivery the library refused for key reuse, as its worker recorded it on the delivery timeline. */
const keyReuseRefusal = z.object({
  id: z.string().meta({ description: "The delivery's place on the timeline (its chunk and position): unique" }),
  deliveredAt: instant.meta({ description: "When the database answered (and refused) the claim" }),
  tenant: z.string(),
  key: z.string(),
  jobType: z.string(),
  messageId: z.string().nullable().meta({ description: "The refused message, dead-lettered by the adapter" }),
  deliveryAttempt: z.number().int().nullable().meta({ description: "The broker's delivery count, when the adapter passed one" }),
  effectAttempt: z.number().int().meta({ description: "The existing effect's attempt when the delivery met it" }),
  worker: z.string(),
});
export type KeyReuseRefusal = z.infer<typeof keyReuseRefusal>;

export const keyReuseListResponse = z.object({
  ...appliedFilter,
  refusals: z.array(keyReuseRefusal).meta({ description: "Newest first" }),
  nextCursor,
});
export type KeyReuseListResponse = z.infer<typeof keyReuseListResponse>;
