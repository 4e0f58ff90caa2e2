import { z } from "zod";

/** The contract of GET /api/v1/health (public: polled before anyone can sign in). */
// Only whether PostgreSQL answers, and how fast: no version of anything (a public route must not
// tell a caller which software to look up vulnerabilities for).
export const healthResponse = z.object({
  ok: z.literal(true),
  database: z.object({ latencyMs: z.number() }),
});
export type Health = z.infer<typeof healthResponse>;
