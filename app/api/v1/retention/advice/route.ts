import { handleErrors, jsonResponse } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { consoleDatabase } from "@/lib/console/database";
import { adviceQuerySchema, toAdviceOptions } from "@/lib/retention/advice-query";
import { getRetentionAdvice } from "@/lib/retention/advise-retention";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/retention/advice?window=30&basis=p99.9&safetyFactor=2&deadLetterDwell=0&jobType=
 * → Advice (lib/retention/advice-types.ts): the recommendation, its inputs and its reasons.
 */
export const GET = handleErrors(async (request: Request) => {
  const query = parseSearchParams(adviceQuerySchema, new URL(request.url));
  return jsonResponse(await getRetentionAdvice(consoleDatabase(), toAdviceOptions(query)));
});
