import { handleErrors, jsonResponse } from "@/lib/api/errors";
import { checkHealth } from "@/lib/console/check-health";

// Always asked live: the start script and load balancers poll this.
export const dynamic = "force-dynamic";

/** 200 {ok:true, database:{latencyMs, serverVersion}} when PostgreSQL answers; 503 {error:{code,message}} when not. */
export const GET = handleErrors(async () => jsonResponse(await checkHealth()));
