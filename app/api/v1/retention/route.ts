import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { getRetention } from "@/lib/features/retention-and-gaps/get-retention";
import { parseRetentionQuery } from "@/lib/features/retention-and-gaps/retention-query";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/retention?runs=1-200 → RetentionView: settings, plan (partitions and guards), live
 * workers' windows, the last `runs` maintenance runs (default 20). A tenant token gets the settings
 * and its own largest gap: the rest spans every tenant (plan null).
 */
export const GET = withAuth("viewer", async (request, { scope }) => {
  const { runs } = parseRetentionQuery(new URL(request.url));
  return jsonResponse(await getRetention(scope, { runs }));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
