import { loadConfig } from "../config";

/**
 * CONSOLE_READ_ONLY=true: a console that only looks (a status screen, a console given to auditors,
 * one kept up during an incident review). withAuth refuses every state-changing request with this
 * message, whatever the role, and the pages hide their write buttons (the shell reads the flag).
 */
export const READ_ONLY_MESSAGE =
  "this console is read-only (CONSOLE_READ_ONLY=true): writes are turned off; use a console started without it";

export function consoleReadOnly(): boolean {
  return loadConfig().CONSOLE_READ_ONLY;
}
