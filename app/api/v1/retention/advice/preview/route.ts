import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { consoleDatabase } from "@/lib/console/database";
import { previewAdvice } from "@/lib/features/retention-and-gaps/advice-apply";
import { toAdviceOptions } from "@/lib/features/retention-and-gaps/advice-query";
import { adviceQuery } from "@/lib/features/retention-and-gaps/contract";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/retention/advice/preview?<the advice's query> → AdvicePreview: the advice as a change
 * of the settings (before, after), what must change first, and the plan it implies. Viewer,
 * platform tokens (the settings and the partitions are the fleet's). Reads only.
 */
export const GET = withAuth("viewer", async (request, { scope }) => {
  scope.requirePlatform("the retention advice's preview (the fleet's settings and partitions)");
  const query = parseSearchParams(adviceQuery, new URL(request.url));
  return jsonResponse(await previewAdvice(toAdviceOptions(query), { db: consoleDatabase() }));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
