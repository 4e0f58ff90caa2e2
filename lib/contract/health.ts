import { z } from "zod";

/** The contract of GET /api/v1/health (public: polled before anyone can sign in). */
export const healthResponse = z.object({
  ok: z.literal(true),
  database: z.object({ latencyMs: z.number(), serverVersion: z.string() }),
});
export type Health = z.infer<typeof healthResponse>;
