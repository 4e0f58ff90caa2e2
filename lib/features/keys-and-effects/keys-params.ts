import { z } from "zod";
import { safeText } from "../../fields";
import { EFFECT_STATUSES } from "./effects-types";

/**
 * The Keys page's URL (/keys?tenant=&q=&status=&jobType=&key=), parsed the same way on the server
 * and in the API: an invalid value shows the API's 400 text. `key` opens that effect's detail;
 * the URL is the shareable deep link.
 */
// The search form submits its empty fields ("status=&jobType="): empty means "any".
const blank = (value: unknown) => (value === "" ? undefined : value);
const text = (min: number) => z.preprocess(blank, safeText(255, min).optional());

export const keysPageParams = z.object({
  tenant: text(1),
  q: text(0),
  status: z.preprocess(blank, z.enum(EFFECT_STATUSES).optional()),
  jobType: text(1),
  key: text(1),
  // The search's page: the API's nextCursor, checked against the search it belongs to when read.
  cursor: z.preprocess(blank, safeText(1000, 1).optional()),
});

export type KeysPageParams = z.infer<typeof keysPageParams>;
