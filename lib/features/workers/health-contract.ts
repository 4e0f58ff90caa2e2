import { z } from "zod";

/** The contract of GET /api/v1/health (public: polled before anyone can sign in). */
// Only whether the databases answer, and how fast: no version of anything (a public route must not
// tell a caller which software to look up vulnerabilities for).
export const healthResponse = z.object({
  ok: z.literal(true),
  database: z.object({ latencyMs: z.number() }).meta({ description: "The console's PostgreSQL" }),
  effectsStore: z.object({ latencyMs: z.number() }).nullable().meta({
    description:
      "The effects store of EFFECTS_DATABASE_URL (a MySQL or MariaDB server); null when the effects are in the console's PostgreSQL (database)",
  }),
});
export type Health = z.infer<typeof healthResponse>;
