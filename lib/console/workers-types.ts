/**
 * The Workers panel's JSON shape, shared by the read model, the route handler and the React
 * components (types and constants only: safe to import from client code).
 */

/** The window the Workers panel counts restarts over. */
export const RESTART_WINDOW_SECONDS = 3600;

export type { WorkerStatus, WorkersResponse } from "../contract/workers";
