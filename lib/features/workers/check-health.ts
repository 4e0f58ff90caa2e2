import { consoleDatabase } from "../../console/database";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
import type { Queryable } from "../../db/types";
import type { Health } from "./health-contract";

const roundTrip = async (ask: () => Promise<unknown>) => {
  const started = performance.now();
  await ask();
  return { latencyMs: Math.round((performance.now() - started) * 10) / 10 };
};

/**
 * Whether the console can answer at all: one round trip to its PostgreSQL and, when the effects
 * are on a MySQL server of their own, one there, at once. Throws the ConsoleError of the first that
 * does not answer (its message names which).
 */
export async function checkHealth(db: Queryable = consoleDatabase(), effects: EffectsSource = effectsStore()): Promise<Health> {
  const [database, effectsStoreHealth] = await Promise.all([
    roundTrip(() => db.query("SELECT 1")),
    byEngine<Promise<Health["effectsStore"]>>(effects, {
      postgres: async () => null,
      mysql: (my) => roundTrip(() => my.query("SELECT 1")),
    }),
  ]);
  return { ok: true, database, effectsStore: effectsStoreHealth };
}
