/**
 * The benchmarks' settings from the environment. A value that is not a number in range stops the
 * benchmark before it seeds anything, with one line naming the variable: a typo must not become
 * a NaN-second phase that measures nothing, or a run that never ends.
 */
export class BenchSettingError extends Error {}

export interface BenchNumberRule {
  /** Whole numbers only (counts: rows, jobs, rounds, callers). */
  integer?: boolean;
}

/** Parses one setting: `fallback` when unset or blank, else a finite number above 0 (and whole, if asked). */
export function parseBenchNumber(
  name: string,
  raw: string | undefined,
  fallback: number,
  { integer = false }: BenchNumberRule = {},
): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw.trim().replaceAll("_", ""));
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new BenchSettingError(
      `${name} must be ${integer ? "a whole number ≥ 1" : "a number above 0"} (got ${JSON.stringify(raw)})`,
    );
  }
  return value;
}

/** Parses a setting that names one of `choices`: the first choice when unset or blank. */
export function parseBenchChoice<C extends string>(name: string, raw: string | undefined, choices: readonly [C, ...C[]]): C {
  if (raw === undefined || raw.trim() === "") return choices[0];
  const value = raw.trim();
  if (!(choices as readonly string[]).includes(value)) {
    throw new BenchSettingError(`${name} must be ${choices.join(" or ")} (got ${JSON.stringify(raw)})`);
  }
  return value as C;
}

/** A bad setting stops the benchmark with its one line and exit code 2 (bad input), like the other commands. */
function orExit<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof BenchSettingError)) throw error;
    process.stderr.write(`bench: ${error.message}\n`);
    process.exit(2);
  }
}

/** parseBenchNumber on this process's environment. */
export function benchNumber(name: string, fallback: number, rule?: BenchNumberRule): number {
  return orExit(() => parseBenchNumber(name, process.env[name], fallback, rule));
}

/** parseBenchChoice on this process's environment. */
export function benchChoice<C extends string>(name: string, choices: readonly [C, ...C[]]): C {
  return orExit(() => parseBenchChoice(name, process.env[name], choices));
}
