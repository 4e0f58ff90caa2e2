/**
 * The logger the library writes to: pino's call shape (`logger.warn({ err }, "message")`), so a pino
 * logger — or any logger with these methods — is passed as is. Without one, the library writes one
 * JSON line per record to stderr at LOG_LEVEL (info), as pino would, so it needs no logging package.
 */
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal";

export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  isLevelEnabled(level: string): boolean;
}

const LEVELS: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

function levelValue(level: string | undefined): number {
  if (level === "silent") return Number.POSITIVE_INFINITY;
  return LEVELS[(level ?? "info") as LogLevel] ?? LEVELS.info;
}

function serialise(value: unknown): unknown {
  if (value instanceof Error) return { type: value.name, message: value.message, stack: value.stack };
  return value;
}

/** A pino-shaped JSON-lines logger on stderr; `level` defaults to LOG_LEVEL, else info. */
export function defaultLogger(name: string, level = process.env.LOG_LEVEL): Logger {
  const threshold = levelValue(level);
  const write = (lvl: LogLevel) =>
    ((fieldsOrMessage: object | string, message?: string) => {
      if (LEVELS[lvl] < threshold) return;
      const fields = typeof fieldsOrMessage === "string" ? {} : fieldsOrMessage;
      const msg = typeof fieldsOrMessage === "string" ? fieldsOrMessage : message;
      const record: Record<string, unknown> = { level: LEVELS[lvl], time: Date.now(), pid: process.pid, name };
      for (const [k, v] of Object.entries(fields)) record[k] = serialise(v);
      if (msg !== undefined) record.msg = msg;
      process.stderr.write(`${JSON.stringify(record)}\n`);
    }) as LogFn;
  return {
    trace: write("trace"),
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    fatal: write("fatal"),
    isLevelEnabled: (lvl) => LEVELS[lvl as LogLevel] >= threshold,
  };
}
