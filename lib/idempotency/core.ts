import type { Coalescer } from "./coalescer";
import type { DuplicateLedger } from "./duplicates";
import type { Logger } from "./logger";
import type { EffectsMetrics } from "./metrics";
import type { ResolvedOptions } from "./options";
import type { Rollups } from "./rollups";
import type { Store } from "./store";
import type { DeliveryTimeline } from "./timeline";

/** What every part of one createEffects() instance shares. */
export interface EffectsCore {
  opts: ResolvedOptions;
  metrics: EffectsMetrics;
  rollups: Rollups | null;
  /** Per-row duplicate bookkeeping, applied in batches. */
  duplicates: DuplicateLedger;
  /** Every delivery's claim answer, applied in batches; null when the timeline option is off. */
  timeline: DeliveryTimeline | null;
  logger: Logger;
  closed: boolean;
  /** Shares round trips between concurrent autocommit claims, completions and failures; null when `coalesce` is off. */
  coalescer: Coalescer | null;
  /** Where effects are kept: every statement of the lifecycle goes through it (store.ts). */
  store: Store;
}
