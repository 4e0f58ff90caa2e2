import { Redis } from "ioredis";

/**
 * Which Redis the BullMQ tests use: REDIS_URL, else 127.0.0.1:6379. Outside CI a missing Redis
 * skips those tests with a loud notice; under CI=true it is an error (the tests are required).
 */
export async function findTestRedis(): Promise<string | null> {
  const url = process.env.REDIS_URL || "redis://127.0.0.1:6379";
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 1500, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.ping();
    return url;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (process.env.CI === "true") {
      throw new Error(`BullMQ tests need Redis under CI: nothing answers at ${url} (${why})`);
    }
    console.warn(
      `\n${"!".repeat(78)}\n!! BullMQ tests SKIPPED: no Redis answers at ${url} (${why}).\n!! Start one (redis-server) or set REDIS_URL; under CI=true they are required.\n${"!".repeat(78)}\n`,
    );
    return null;
  } finally {
    client.disconnect();
  }
}
