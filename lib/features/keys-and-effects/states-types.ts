/**
 * Browse by state: the States page's and /api/v1/effect-states' client-safe values. Zod-free, so
 * the browser may import them (the answers' types are inferred in states-contract.ts).
 *
 * The states are the library's words (`@onceboard/idempotency/states`): its four statuses, with
 * in_progress split by its own rule, isStuck, into a live claim and a stuck one, so that every
 * effect is in exactly one state and the counts add up to the effects of the filter.
 */

import { type EffectLease, type EffectStatus, isStuck } from "../../idempotency/states";

/** Every state an effect can be in, in the order the page lists them. */
export const EFFECT_STATES = ["in_progress", "stuck", "failed", "abandoned", "completed"] as const;
export type EffectState = (typeof EFFECT_STATES)[number];

/**
 * What the page can list: an effect state, or the deliveries the library refused because their key
 * had first come with another payload (the adapters dead-letter them; nothing ran). Those are not
 * effects: the effect is the first payload's, in whatever state it is.
 */
export const KEY_REUSE = "key_reuse" as const;
export const BROWSE_LISTS = [...EFFECT_STATES, KEY_REUSE] as const;
export type BrowseList = (typeof BROWSE_LISTS)[number];

/** An effect's state: its status, except that an in-progress claim whose lease ran out is stuck (isStuck). */
export function effectStateOf(effect: EffectLease & { status: EffectStatus }, now: Date): EffectState {
  return isStuck(effect, now) ? "stuck" : effect.status;
}

/** How each list is named on the page and in a runbook's link. */
export const BROWSE_LABELS: Record<BrowseList, string> = {
  in_progress: "In progress",
  stuck: "Stuck",
  failed: "Failed",
  abandoned: "Abandoned",
  completed: "Completed",
  key_reuse: "Key reused",
};

/** What each list holds, in one sentence (the page's list heading says it). */
export const BROWSE_MEANINGS: Record<BrowseList, string> = {
  in_progress: "Claimed, and the claim's lease is still running.",
  stuck: "In progress with its lease run out: the next delivery takes it over, or an operator releases it.",
  failed: "The step threw; the next delivery retries it.",
  abandoned: "An at-most-once step whose worker died: never run again (its outcome is unknown).",
  completed: "Ran, and its outcome is stored.",
  key_reuse:
    "Deliveries refused because their key first came with another payload: nothing ran, and the adapter dead-lettered the message.",
};

/** The list the page shows when the URL names none: the one an on-call engineer most often opens first. */
export const DEFAULT_BROWSE_LIST: BrowseList = "failed";

/** How many rows a page of a list holds. */
export const STATES_PAGE_SIZE = 50;

/** The States page's filter, as its URL carries it. */
export interface StatesFilters {
  state?: string | null;
  tenant?: string | null;
  jobType?: string | null;
  from?: string | null;
  to?: string | null;
  cursor?: string | null;
}

/** The States page for these filters: where the alerts' runbooks, the Overview and the Keys page link. */
export function statesHref(filters: StatesFilters = {}): string {
  const search = new URLSearchParams();
  for (const name of ["state", "tenant", "jobType", "from", "to", "cursor"] as const) {
    const value = filters[name];
    if (value) search.set(name, value);
  }
  const text = search.toString();
  return text ? `/states?${text}` : "/states";
}
