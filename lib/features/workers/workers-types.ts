/**
 * The Workers panel's constants, and the types of GET /api/v1/workers (schemas in
 * lib/features/workers/contract.ts; types and constants only: safe to import from client code).
 */

/** The window the Workers panel counts restarts over (from the starts the workers recorded). */
export const RESTART_WINDOW_SECONDS = 3600;
