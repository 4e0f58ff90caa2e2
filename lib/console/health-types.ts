/** GET /api/v1/health's JSON (types only: safe to import from client code). */
export interface Health {
  ok: true;
  database: { latencyMs: number; serverVersion: string };
}
