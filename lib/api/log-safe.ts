import pino, { type DestinationStream } from "pino";

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

/**
 * The console's JSON log lines, through pino: `{"level":"error","time":"…","msg":"…",…}` on stderr,
 * written synchronously so a line is out before the process ends. `destination` is for tests.
 */
export function createEventLogger(destination: DestinationStream = pino.destination({ fd: 2, sync: true })) {
  const logger = pino(
    {
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  /** One line; request values in string fields and the message are neutralised (safeForLog) first. */
  return (level: "info" | "warn" | "error", msg: string, fields: Record<string, unknown> = {}): void => {
    const safe: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(fields)) safe[name] = typeof value === "string" ? safeForLog(value) : value;
    logger[level](safe, safeForLog(msg));
  };
}

let shared: ReturnType<typeof createEventLogger> | undefined;

/** One JSON line on stderr (see createEventLogger); the logger is made on first use. */
export function logEvent(level: "info" | "warn" | "error", msg: string, fields: Record<string, unknown> = {}): void {
  shared ??= createEventLogger();
  shared(level, msg, fields);
}
