/**
 * A minimal reader of the Prometheus text exposition format (what prom-client serves on /metrics;
 * OpenMetrics text reads the same way for counters). Enough to sum a few counters: comments, HELP
 * and TYPE lines are skipped (TYPE is remembered), label values may hold spaces, commas, braces and
 * escaped quotes, and a line that does not parse is ignored rather than failing the whole scrape.
 */

interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface PromExposition {
  samples: PromSample[];
  /** Metric family name → type, from `# TYPE` lines (a family with no samples yet still has one). */
  types: Map<string, string>;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPE_LINE = /^#\s*TYPE\s+([a-zA-Z_:][a-zA-Z0-9_:]*)\s+(\S+)/;
const ESCAPES: Record<string, string> = { "\\": "\\", '"': '"', n: "\n" };

function parseValue(token: string): number | undefined {
  if (/^[+]?inf$/i.test(token)) return Number.POSITIVE_INFINITY;
  if (/^-inf$/i.test(token)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(token)) return Number.NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(token)) return undefined;
  return Number(token);
}

/** One sample line, or undefined when it is not one (then the caller skips it). */
export function parseSampleLine(line: string): PromSample | undefined {
  const name = METRIC_NAME.exec(line)?.[0];
  if (!name) return undefined;
  let i = name.length;
  const skipSpaces = () => {
    while (line[i] === " " || line[i] === "\t") i++;
  };
  const labels: Record<string, string> = {};
  skipSpaces();
  if (line[i] === "{") {
    i++;
    for (;;) {
      skipSpaces();
      if (line[i] === "}") break;
      const labelName = LABEL_NAME.exec(line.slice(i))?.[0];
      if (!labelName) return undefined;
      i += labelName.length;
      skipSpaces();
      if (line[i] !== "=") return undefined;
      i++;
      skipSpaces();
      if (line[i] !== '"') return undefined;
      i++;
      let value = "";
      for (;;) {
        const c = line[i];
        if (c === undefined) return undefined; // unterminated quote
        if (c === '"') break;
        if (c === "\\") {
          const next = line[i + 1];
          if (next === undefined) return undefined;
          value += ESCAPES[next] ?? next;
          i += 2;
        } else {
          value += c;
          i++;
        }
      }
      i++; // the closing quote
      labels[labelName] = value;
      skipSpaces();
      if (line[i] === ",") {
        i++;
        continue;
      }
      if (line[i] === "}") break;
      return undefined;
    }
    i++; // the closing brace
  }
  // The value, then an optional timestamp and (OpenMetrics) an exemplar: only the value matters.
  const rest = line.slice(i).trim();
  const value = parseValue(rest.split(/\s+/, 1)[0] ?? "");
  if (value === undefined) return undefined;
  return { name, labels, value };
}

export function parsePrometheusText(text: string): PromExposition {
  const samples: PromSample[] = [];
  const types = new Map<string, string>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (line.startsWith("#")) {
      const type = TYPE_LINE.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = parseSampleLine(line);
    if (sample) samples.push(sample);
  }
  return { samples, types };
}

/** The sum of `name`'s samples across all label sets, keeping only those whose labels include `match`. */
export function sumSamples(samples: PromSample[], name: string, match: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const sample of samples) {
    if (sample.name !== name) continue;
    if (Object.entries(match).every(([label, value]) => sample.labels[label] === value)) sum += sample.value;
  }
  return sum;
}
