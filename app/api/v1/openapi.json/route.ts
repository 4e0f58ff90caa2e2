import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { OPENAPI } from "@/lib/routes/openapi";

export const dynamic = "force-dynamic";

/** GET /api/v1/openapi.json → the API described as OpenAPI 3.1 (viewer). */
export const GET = withAuth("viewer", async () => jsonResponse(OPENAPI));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
