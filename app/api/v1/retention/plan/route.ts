import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { getRetentionPlan } from "@/lib/features/retention-and-gaps/get-retention";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/retention/plan → PlanView: partitions to create, to detach and drop, and the guard
 * that keeps each other one. Platform tokens only (403 for a tenant token): the partitions' row
 * counts and sizes sum every tenant's effects.
 */
export const GET = withAuth("viewer", async (_request, { scope }) => jsonResponse(await getRetentionPlan(scope)));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
