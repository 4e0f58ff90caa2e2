/**
 * A system the console-truth tests run on (test/console-truth.test.ts): a workload written through
 * the library's public API with disagreements planted at its provider, and what the console and
 * the reconciler must therefore report. Two implement it: the demo's shape (test/demo-system.ts)
 * and the second system, written from the docs alone (test/second-system/).
 */
export interface Planted {
  /** Findings the reconciler must record, and no others: [kind, tenant, key], sorted. */
  findings: [kind: string, tenant: string, key: string][];
  /** Provider-held effects that must match. */
  matched: number;
  /** Provider-held effects in the window. */
  effectsSeen: number;
  /** Per job type, as the Overview's Job types table must show it. */
  activity: Record<
    string,
    { deliveries: number; claims: number; suppressions: number; redeliveries: number; uncaughtViolations: number }
  >;
  /** The uncaught unique violations: [tenant, key, constraint]. */
  violations: [tenant: string, key: string, constraint: string][];
  /** Each tenant's keys, sorted. */
  keys: Record<string, string[]>;
  /** The Keys page's provider verdict for some keys: [tenant, key, tone, text pattern]; a null tone: no provider side. */
  verdicts: [tenant: string, key: string, tone: "ok" | "warning" | "danger" | null, text: RegExp | null][];
  /** The providers with a key window the retention advice must weigh: [name, seconds]. */
  keyWindows: [provider: string, seconds: number][];
}

export interface RunningSystem {
  /** The test database the workload was written to (the library's schema on its search path). */
  db: { url: string; pool: import("pg").Pool };
  /** What the console and `npm run reconcile` get: ONCEBOARD_PROVIDERS_FILE and the provider's credentials. */
  env: Record<string, string>;
  /** The provider `npm run reconcile --provider` names. */
  provider: string;
  planted: Planted;
  close(): Promise<void>;
}

export interface KnownSystem {
  name: string;
  tenants: readonly string[];
  /** Job types the system never uses (another system's): nothing it reads may name them. */
  foreignJobTypes: RegExp;
  start(): Promise<RunningSystem>;
}
