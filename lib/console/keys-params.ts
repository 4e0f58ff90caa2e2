import { z } from "zod";
import { EFFECT_STATUSES } from "./effects-types";

/**
 * The Keys page's URL (/keys?tenant=&q=&status=&jobType=&key=), parsed the same way on the server
 * and in the API: an invalid value shows the API's 400 text. `key` opens that effect's detail;
 * the URL is the shareable deep link.
 */
// The search form submits its empty fields ("status=&jobType="): empty means "any".
const blank = (value: unknown) => (value === "" ? undefined : value);

export const keysPageParams = z.object({
  tenant: z.preprocess(blank, z.string().min(1).max(255).optional()),
  q: z.preprocess(blank, z.string().max(255).optional()),
  status: z.preprocess(blank, z.enum(EFFECT_STATUSES).optional()),
  jobType: z.preprocess(blank, z.string().min(1).max(255).optional()),
  key: z.preprocess(blank, z.string().min(1).max(255).optional()),
});

export type KeysPageParams = z.infer<typeof keysPageParams>;
