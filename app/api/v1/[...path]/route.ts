import { ApiError } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";

export const dynamic = "force-dynamic";

/** Any /api/v1 path no route claims: JSON 404, after authentication (no path oracle for strangers). */
const notFound = withAuth("viewer", async (request) => {
  throw new ApiError(
    "NOT_FOUND",
    `no API endpoint at ${new URL(request.url).pathname.slice(0, 200)}: see GET /api/v1/openapi.json`,
  );
});

export const GET = notFound;
export const HEAD = notFound;
export const POST = notFound;
export const PUT = notFound;
export const PATCH = notFound;
export const DELETE = notFound;
