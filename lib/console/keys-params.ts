import { z } from "zod";
import { EFFECT_STATUSES } from "./effects-types";

/**
 * The Keys page's URL (/keys?tenant=&q=&status=&jobType=&key=), parsed the same way on the server
 * and in the API: an invalid value shows the API's 400 text. `key` opens that effect's detail;
 * the URL is the shareable deep link.
 */
// The search form submits its empty fields ("status=&jobType="): empty means "any".
const blank = (value: unknown) => (value === "" ? undefined : value);
// As the API refuses them: no tenant, key or job type holds a control character (text cannot hold NUL).
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL_FREE = /^[^\u0000-\u001f\u007f]*$/;
const text = (min: number) =>
  z.preprocess(blank, z.string().min(min).max(255).regex(CONTROL_FREE, "must not contain control characters").optional());

export const keysPageParams = z.object({
  tenant: text(1),
  q: text(0),
  status: z.preprocess(blank, z.enum(EFFECT_STATUSES).optional()),
  jobType: text(1),
  key: text(1),
});

export type KeysPageParams = z.infer<typeof keysPageParams>;
