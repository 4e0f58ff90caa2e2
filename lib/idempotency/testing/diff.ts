/**
 * Structural comparison of two observe() snapshots, with one readable line per difference.
 * Snapshots are compared as JSON (what `observe()` returns is round-tripped first: a Date becomes
 * its ISO string, a bigint its decimal string), so the reference and a scenario compare the same
 * way whatever driver produced them.
 */

/** JSON round trip that keeps bigints (pg returns count(*) as a string, but users may not). */
export function normalizeSnapshot(value: unknown): unknown {
  const json = JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? v.toString() : v));
  return json === undefined ? null : JSON.parse(json);
}

function show(value: unknown): string {
  if (value === undefined) return "(absent)";
  const text = JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function join(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  const safe = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
  if (path === "") return safe;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${safe}]`;
}

/**
 * Lines like `ledger: 1 item → 3 items; added 2× {"kind":"capture"}`,
 * `orders[0].status: "pending" → "paid"`. Empty when the snapshots are equal.
 * `expected` is the reference (left of the arrow), `actual` the scenario's.
 */
export function diffSnapshots(expected: unknown, actual: unknown, limit = 20): string[] {
  const lines: string[] = [];
  const walk = (path: string, a: unknown, b: unknown) => {
    if (lines.length >= limit) return;
    if (Array.isArray(a) && Array.isArray(b)) {
      const common = Math.min(a.length, b.length);
      if (a.length !== b.length) {
        // Items added or removed at the end are summarised on one line, grouped when identical:
        // "captures: 1 item → 5 items; added 4× {…}".
        const extra = a.length > b.length ? a.slice(common) : b.slice(common);
        const groups = new Map<string, number>();
        for (const item of extra) groups.set(show(item), (groups.get(show(item)) ?? 0) + 1);
        const what = [...groups].map(([text, n]) => (n > 1 ? `${n}× ${text}` : text)).join(", ");
        const items = (n: number) => `${n} item${n === 1 ? "" : "s"}`;
        lines.push(
          `${path || "(snapshot)"}: ${items(a.length)} → ${items(b.length)}; ${a.length > b.length ? "removed" : "added"} ${what}`,
        );
      }
      for (let i = 0; i < common; i++) walk(join(path, i), a[i], b[i]);
      return;
    }
    if (isObject(a) && isObject(b)) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
      for (const key of keys) walk(join(path, key), a[key], b[key]);
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) lines.push(`${path || "(snapshot)"}: ${show(a)} → ${show(b)}`);
  };
  walk("", expected, actual);
  if (lines.length >= limit) lines.push("… (more differences not shown)");
  return lines;
}
