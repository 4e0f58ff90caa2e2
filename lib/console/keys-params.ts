import { z } from "zod";
import { EFFECT_STATUSES } from "./effects-types";

/**
 * The Keys page's URL (/keys?tenant=&q=&status=&jobType=&key=), parsed the same way on the server
 * and in the API: an invalid value shows the API's 400 text. `key` opens that effect's detail;
 * the URL is the shareable deep link.
 */
export const keysPageParams = z.object({
  tenant: z.string().min(1).max(255).optional(),
  q: z.string().max(255).optional(),
  status: z.enum(EFFECT_STATUSES).optional(),
  jobType: z.string().min(1).max(255).optional(),
  key: z.string().min(1).max(255).optional(),
});

export type KeysPageParams = z.infer<typeof keysPageParams>;
