import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { consoleDatabase } from "@/lib/console/database";
import { toAdviceOptions } from "@/lib/features/retention-and-gaps/advice-query";
import { getRetentionAdvice } from "@/lib/features/retention-and-gaps/advise-retention";
import { adviceQuery } from "@/lib/features/retention-and-gaps/contract";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/retention/advice?window=30&basis=p99.9&safetyFactor=2&deadLetterDwell=0&jobType=
 * → Advice (lib/features/retention-and-gaps/advice-types.ts): the recommendation, its inputs and its reasons.
 * Viewer, platform tokens: the advice is about the fleet's retention, from every tenant's gaps.
 */
export const GET = withAuth("viewer", async (request, { scope }) => {
  scope.requirePlatform("the retention advice");
  const query = parseSearchParams(adviceQuery, new URL(request.url));
  return jsonResponse(await getRetentionAdvice(consoleDatabase(), toAdviceOptions(query)));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
