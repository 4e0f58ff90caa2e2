import { afterAll, beforeAll, describe } from "vitest";
import { probeMariadb } from "../../../test/mariadb-probe";
import {
  createEngineDatabase,
  ENGINES,
  type Engine,
  type EngineDatabase,
  type EngineVariant,
  engineOf,
  testMariadbUrl,
} from "./engines";

/**
 * Runs a test file's tests once per engine (engines.ts). Outside CI a MariaDB that does not answer
 * skips its half with a loud notice; under CI=true it is an error: the tests are required (as for
 * RabbitMQ and NATS, lib/queues/testing/brokers.ts). Only test files import this module: it looks
 * for MariaDB when it loads (a child process of a test imports engines.ts, never this).
 */

/** Whether MariaDB's half runs (known before the file's tests are collected). */
const MARIADB = (await probeMariadb(testMariadbUrl())) !== null;

/**
 * Runs `body` once per engine, in a describe block named for it (`on postgres`, `on mariadb`), the
 * MariaDB one skipped (loudly, once) where no MariaDB answers outside CI. Tests in a file run in
 * order, so a database made by a block's beforeAll is the one its tests see. A variant
 * (ENGINES_AND_DRIVERS) runs its engine's body again on another driver, in `on mariadb-driver`:
 * the body sees the engine, the database (createEngineDatabase) the driver.
 */
export function eachEngine(
  body: (engine: Engine, variant: EngineVariant) => void,
  engines: readonly EngineVariant[] = ENGINES,
): void {
  for (const variant of engines) {
    const engine = engineOf(variant);
    describe.skipIf(engine === "mariadb" && !MARIADB)(`on ${variant}`, () => body(engine, variant));
  }
}

/** eachEngine with the file's database made before and dropped after each engine's block. */
export function withEachEngine(
  set: (db: EngineDatabase | undefined) => void,
  body: (engine: Engine) => void,
  options: { poolSize?: number; setup?: (db: EngineDatabase) => Promise<void>; engines?: readonly EngineVariant[] } = {},
): void {
  eachEngine((engine, variant) => {
    let db: EngineDatabase | undefined;
    beforeAll(async () => {
      db = await createEngineDatabase(variant, options);
      set(db);
      await options.setup?.(db);
    });
    afterAll(async () => {
      await db?.drop();
      set(undefined);
    });
    body(engine);
  }, options.engines);
}
