/**
 * How fast fresh `once` calls could go at all, estimated from what one wave of them costs alone.
 *
 * A fresh `once` is two statements in a row on its caller's path: the claim, which must be
 * committed before the body runs, and the completion, which must be committed before the call
 * returns (and the broker is told the message is done). Coalescing puts the calls in flight into
 * waves that share those two statements, so a caller in a wave of `size` waits at least the
 * wave's claim and completion as they take with nothing else running (`latencyMs`, measured one
 * wave at a time), and each call costs the machine `cpuUsPerKey` (this process and the database
 * server, measured the same way). With `concurrency` callers, by Little's law:
 *
 *   rate of the callers in waves of size w  ≤  callers in them / latencyMs(w)
 *   Σ rate(w) · cpuUsPerKey(w)              ≤  cores
 *
 * The ceiling is the best split of the callers over wave sizes (a linear program whose best
 * split uses at most two sizes, so every size and every pair is tried). The latency half is a
 * hard bound: queueing, contention and the body only add to a caller's cycle. The CPU half is an
 * estimate: under load the process shares event-loop wake-ups between waves, so a call can cost a
 * little less CPU than it did alone (docs/benchmarks.md gives both for a wave of 8).
 */
export interface WaveCost {
  /** Calls per wave: one claim statement and one completion statement carry them all. */
  size: number;
  /** The wave's claim and completion, one wave in flight and nothing else running: ms. */
  latencyMs: number;
  /** CPU per call (this process + the database server), µs; null when the server's is not measurable here. */
  cpuUsPerKey: number | null;
}

export interface Ceiling {
  perSecond: number;
  /** Callers per wave size in the best split (one or two sizes). */
  split: { size: number; callers: number }[];
  /** What stops it: the two statements' latency alone, or latency and CPU together. */
  limitedBy: "latency" | "cpu";
}

/** The best split of `concurrency` callers over `waves` (sizes above `concurrency` cannot occur). */
export function onceCeiling(waves: readonly WaveCost[], concurrency: number, cores: number): Ceiling {
  const usable = waves.filter((w) => w.size <= concurrency && w.latencyMs > 0);
  if (usable.length === 0) throw new Error("onceCeiling: no wave size at or below the concurrency was measured");
  // Per caller in waves of size w: calls per second it can make, and the CPU share those take.
  const rate = (w: WaveCost) => 1000 / w.latencyMs;
  const cpu = (w: WaveCost) => (rate(w) * (w.cpuUsPerKey ?? 0)) / 1e6;
  let best: Ceiling = { perSecond: 0, split: [], limitedBy: "latency" };
  const consider = (split: { wave: WaveCost; callers: number }[]) => {
    const perSecond = split.reduce((sum, s) => sum + s.callers * rate(s.wave), 0);
    const load = split.reduce((sum, s) => sum + s.callers * cpu(s.wave), 0);
    if (load > cores * (1 + 1e-9)) return;
    if (perSecond > best.perSecond) {
      best = {
        perSecond,
        split: split.filter((s) => s.callers > 1e-9).map((s) => ({ size: s.wave.size, callers: s.callers })),
        limitedBy: load >= cores * (1 - 1e-9) ? "cpu" : "latency",
      };
    }
  };
  for (const w of usable) {
    // All callers in waves of this size: as many as the CPU allows, up to all of them.
    const callers = cpu(w) > 0 ? Math.min(concurrency, cores / cpu(w)) : concurrency;
    consider([{ wave: w, callers }]);
  }
  for (const [i, a] of usable.entries()) {
    for (const b of usable.slice(i + 1)) {
      // Both sizes with every caller busy and the CPU exactly used: x_a + x_b = C, x_a·cpu_a + x_b·cpu_b = cores.
      const denominator = cpu(a) - cpu(b);
      if (Math.abs(denominator) < 1e-12) continue;
      const xa = (cores - concurrency * cpu(b)) / denominator;
      const xb = concurrency - xa;
      if (xa < 0 || xb < 0) continue;
      consider([
        { wave: a, callers: xa },
        { wave: b, callers: xb },
      ]);
    }
  }
  return best;
}
