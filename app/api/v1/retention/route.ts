import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { getRetention } from "@/lib/retention/get-retention";

export const dynamic = "force-dynamic";

/** GET /api/v1/retention → RetentionView: settings, plan (partitions and guards), live workers' windows, runs. */
export const GET = withAuth("viewer", async () => jsonResponse(await getRetention()));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
