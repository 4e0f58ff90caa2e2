/**
 * Values from requests (keys, tenants, token names, paths) are neutralised before they reach a log
 * line: control characters (CR, LF, ESC, …), and the Unicode line and paragraph separators, are
 * shown as \uXXXX escapes, so a key like "a\n{"level":"info"…" cannot forge a second log entry or
 * drive a terminal. Long values are cut.
 */
export function safeForLog(value: unknown, max = 300): string {
  const text = typeof value === "string" ? value : String(value);
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** One JSON line on stderr: structured, and JSON escapes whatever the fields hold. */
export function logEvent(level: "info" | "warn" | "error", msg: string, fields: Record<string, unknown> = {}): void {
  const safe: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    safe[name] = typeof value === "string" ? safeForLog(value) : value;
  }
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg: safeForLog(msg), ...safe })}\n`);
}
