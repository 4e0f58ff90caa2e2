import { handleErrors, jsonResponse, otherMethods } from "@/lib/api/errors";
import { checkHealth } from "@/lib/features/workers/check-health";

// Always asked live: the start script and load balancers poll this. Public (no token): they ask
// before anyone can sign in, and the answer says only whether PostgreSQL answers (see proxy.ts).
export const dynamic = "force-dynamic";

/** 200 {ok:true, database:{latencyMs}} when PostgreSQL answers; 503 {error:{code,message}} when not. No version of anything. */
export const GET = handleErrors(async () => jsonResponse(await checkHealth()));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
