import { describe, expect, it } from "vitest";
import { parsePrometheusText, parseSampleLine, sumSamples } from "./prometheus-text";

// What prom-client 15 serves for the worker library's counters, plus what other exporters add.
const EXPOSITION = [
  "# HELP idem_claims_total Effect claims by final result of the claim.",
  "# TYPE idem_claims_total counter",
  'idem_claims_total{job_type="capture-payment",result="claimed"} 12',
  'idem_claims_total{job_type="capture-payment",result="duplicate"} 3',
  'idem_claims_total{job_type="send receipt, eu",result="claimed"} 5 1712345678000',
  '  idem_claims_total { job_type = "say \\"hi\\"}, \\\\ok\\n" , result="claimed", } 2',
  "",
  "# A comment that mentions idem_claims_total 1000",
  "# TYPE idem_deliveries_total counter",
  'idem_deliveries_total{job_type="a",redelivered="true"} 4',
  'idem_deliveries_total{job_type="b",redelivered="true"} 1.5e1',
  'idem_deliveries_total{job_type="a",redelivered="false"} 40',
  "# TYPE idem_duplicate_suppressions_total counter",
  "# TYPE idem_redelivery_gap_seconds histogram",
  'idem_redelivery_gap_seconds_bucket{le="+Inf",job_type="a"} 3',
  "idem_redelivery_gap_seconds_sum NaN",
  "process_cpu_seconds_total 0.25",
  'broken_line{job_type="unterminated} 5',
  "no_value_at_all",
  'idem_claims_total{job_type="x"} not-a-number',
  "# EOF",
].join("\r\n");

describe("parsePrometheusText", () => {
  const { samples, types } = parsePrometheusText(EXPOSITION);

  it("reads samples with their labels, unescaping quotes, backslashes and newlines", () => {
    expect(samples.filter((s) => s.name === "idem_claims_total")).toEqual([
      { name: "idem_claims_total", labels: { job_type: "capture-payment", result: "claimed" }, value: 12 },
      { name: "idem_claims_total", labels: { job_type: "capture-payment", result: "duplicate" }, value: 3 },
      { name: "idem_claims_total", labels: { job_type: "send receipt, eu", result: "claimed" }, value: 5 },
      { name: "idem_claims_total", labels: { job_type: 'say "hi"}, \\ok\n', result: "claimed" }, value: 2 },
    ]);
    expect(samples.find((s) => s.name === "idem_redelivery_gap_seconds_bucket")?.labels.le).toBe("+Inf");
    expect(samples.find((s) => s.name === "idem_redelivery_gap_seconds_sum")?.value).toBeNaN();
    expect(samples.find((s) => s.name === "process_cpu_seconds_total")?.value).toBe(0.25);
  });

  it("skips comments and lines that do not parse instead of failing", () => {
    expect(samples.map((s) => s.name)).not.toContain("broken_line");
    expect(samples.map((s) => s.name)).not.toContain("no_value_at_all");
    expect(samples).toHaveLength(10);
  });

  it("remembers declared types, including families with no samples yet", () => {
    expect(types.get("idem_duplicate_suppressions_total")).toBe("counter");
    expect(types.get("idem_redelivery_gap_seconds")).toBe("histogram");
  });

  it("sums a counter across labels, optionally matching some of them", () => {
    expect(sumSamples(samples, "idem_claims_total")).toBe(22);
    expect(sumSamples(samples, "idem_claims_total", { result: "claimed" })).toBe(19);
    expect(sumSamples(samples, "idem_deliveries_total", { redelivered: "true" })).toBe(19);
    expect(sumSamples(samples, "idem_duplicate_suppressions_total")).toBe(0);
  });
});

describe("parseSampleLine", () => {
  it("reads values the format allows and rejects the rest", () => {
    expect(parseSampleLine("a +Inf")?.value).toBe(Number.POSITIVE_INFINITY);
    expect(parseSampleLine("a -Inf")?.value).toBe(Number.NEGATIVE_INFINITY);
    expect(parseSampleLine("a -0.5e-3 123")?.value).toBe(-0.0005);
    expect(parseSampleLine('a{} 7 # {trace_id="x"} 1')?.value).toBe(7);
    expect(parseSampleLine("a 0x10")).toBeUndefined();
    expect(parseSampleLine('a{b="c" d="e"} 1')).toBeUndefined();
    expect(parseSampleLine("a{b=c} 1")).toBeUndefined();
    expect(parseSampleLine("{} 1")).toBeUndefined();
  });
});
