"use client";

import { createContext, type ReactNode, useContext } from "react";

/**
 * Whether this console takes writes (CONSOLE_READ_ONLY unset), as the shell read it on the server.
 * Write buttons ask useConsoleWritable() and are not rendered when it is false; the API refuses the
 * writes anyway (withAuth), this only spares people a button that cannot work.
 */
const ConsoleWritable = createContext(true);

export function ConsoleModeProvider({ readOnly, children }: { readOnly: boolean; children: ReactNode }) {
  return <ConsoleWritable.Provider value={!readOnly}>{children}</ConsoleWritable.Provider>;
}

export function useConsoleWritable(): boolean {
  return useContext(ConsoleWritable);
}
