import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { OPENAPI } from "@/lib/api/openapi";
import { withAuth } from "@/lib/auth/with-auth";

export const dynamic = "force-dynamic";

/** GET /api/v1/openapi.json → the API described as OpenAPI 3.1 (viewer). */
export const GET = withAuth("viewer", async () => jsonResponse(OPENAPI));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
