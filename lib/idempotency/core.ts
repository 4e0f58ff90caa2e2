import type { Logger } from "pino";
import type { EffectsMetrics } from "./metrics";
import type { ResolvedOptions } from "./options";
import type { Rollups } from "./rollups";

/** What every part of one createEffects() instance shares. */
export interface EffectsCore {
  opts: ResolvedOptions;
  metrics: EffectsMetrics;
  rollups: Rollups | null;
  logger: Logger;
  closed: boolean;
}
