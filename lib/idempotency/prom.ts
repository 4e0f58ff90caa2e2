import { createRequire } from "node:module";
import type * as PromClientModule from "prom-client";

/**
 * prom-client is an optional peer of the library: `pg` is its only required dependency. With
 * prom-client installed (or a registry passed in), the idem_* metrics are registered as usual;
 * without it, claims run the same and count nothing. Loaded on first use, once.
 */
export type PromClient = typeof PromClientModule;

let loaded: PromClient | null | undefined;

export function promClient(): PromClient | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)("prom-client") as PromClient;
    } catch (error) {
      if ((error as { code?: string }).code !== "MODULE_NOT_FOUND") throw error;
      loaded = null;
    }
  }
  return loaded;
}

/** prom-client, or an error saying what needs it and how to get it. */
export function requirePromClient(purpose: string): PromClient {
  const prom = promClient();
  if (!prom) throw new Error(`${purpose} needs prom-client, an optional peer dependency: npm install prom-client`);
  return prom;
}

/** What a metric the library updates must do: a prom-client metric, or nothing at all. */
const NOTHING = {
  inc() {},
  set() {},
  observe() {},
};

/** A stand-in for every metric of a set when prom-client is not installed. */
export function noMetrics<T extends object>(): T {
  return new Proxy({} as T, { get: () => NOTHING });
}
