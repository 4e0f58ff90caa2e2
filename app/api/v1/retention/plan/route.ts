import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { getRetentionPlan } from "@/lib/retention/get-retention";

export const dynamic = "force-dynamic";

/** GET /api/v1/retention/plan → PlanView: partitions to create, to detach and drop, and the guard that keeps each other one. */
export const GET = withAuth("viewer", async () => jsonResponse(await getRetentionPlan()));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
