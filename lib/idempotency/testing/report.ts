import type pg from "pg";
import { type CheckIdempotentOptions, checkIdempotent, type IdempotencyReport, type ScenarioReport } from "./check";

function scenarioLines(s: ScenarioReport): string[] {
  const lines = [`${s.ok ? "✓" : "✗"} ${s.name}: ${s.description}`];
  if (s.ok && s.abandoned.length === 0) return lines;
  if (!s.equal) {
    lines.push("    state differs from the reference (path: once → this scenario):");
    for (const d of s.diff) lines.push(`      ${d}`);
  }
  for (const r of s.repeated) lines.push(`    repeated: ${r}`);
  for (const m of s.missing) lines.push(`    missing: ${m}`);
  for (const a of s.abandoned) lines.push(`    ${s.ok ? "by design" : "abandoned"}: ${a}`);
  for (const e of s.errors) lines.push(`    error: ${e}`);
  if (!s.ok && s.kind !== "once" && s.repeated.length === 0 && s.missing.length === 0 && s.steps.length > 0) {
    lines.push(`    steps: ${s.steps.map((c) => `${c.step} ran ${c.executions}× (reference ${c.reference}×)`).join(", ")}`);
  }
  return lines;
}

/** A readable summary: one line per scenario, and under each failing one its diff and steps. */
export function formatReport(report: IdempotencyReport, options: { all?: boolean } = {}): string {
  const failing = report.scenarios.filter((s) => !s.ok);
  const head = report.ok
    ? `idempotent: ${report.scenarios.length} scenarios left the same state as one delivery`
    : `not idempotent: ${failing.length} of ${report.scenarios.length} scenarios differ from one delivery`;
  const lines = [head];
  for (const s of report.scenarios) {
    if (options.all || !s.ok || !report.ok) lines.push(...scenarioLines(s));
  }
  for (const w of report.warnings) lines.push(`warning: ${w}`);
  return lines.join("\n");
}

/** Thrown by assertIdempotent: a plain Error whose message is the readable report; `.report` has it all. */
export class IdempotencyCheckError extends Error {
  constructor(readonly report: IdempotencyReport) {
    super(formatReport(report));
    this.name = "IdempotencyCheckError";
  }
}

/** checkIdempotent, then throw IdempotencyCheckError unless every scenario matched. Works in any test runner. */
export async function assertIdempotent<M, Db = pg.Pool>(options: CheckIdempotentOptions<M, Db>): Promise<IdempotencyReport> {
  const report = await checkIdempotent(options);
  if (!report.ok) throw new IdempotencyCheckError(report);
  return report;
}
