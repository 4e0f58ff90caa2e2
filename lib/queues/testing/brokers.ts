import net from "node:net";

/**
 * Which RabbitMQ / NATS the broker tests use: RABBITMQ_URL / NATS_URL, else the machine's own.
 * Outside CI a broker that does not answer skips its tests with a loud notice; under CI=true it is
 * an error (the tests are required), as for Redis (./redis.ts).
 */
export const DEFAULT_RABBITMQ_URL = "amqp://guest:guest@127.0.0.1:5672";
export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";

export const testRabbitUrl = () => process.env.RABBITMQ_URL || DEFAULT_RABBITMQ_URL;
export const testNatsUrl = () => process.env.NATS_URL || DEFAULT_NATS_URL;

/** Opens a TCP connection to the URL's host and port: the broker's protocol is the adapter's business. */
function answers(url: string, defaultPort: number): Promise<void> {
  const parsed = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: parsed.hostname, port: Number(parsed.port) || defaultPort, timeout: 1500 });
    socket.once("connect", () => {
      socket.end();
      resolve();
    });
    socket.once("timeout", () => {
      socket.destroy();
      reject(new Error("connection timed out"));
    });
    socket.once("error", reject);
  });
}

async function find(what: string, envVar: string, url: string, defaultPort: number, start: string): Promise<string | null> {
  try {
    await answers(url, defaultPort);
    return url;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (process.env.CI === "true") throw new Error(`${what} tests need ${what} under CI: nothing answers at ${url} (${why})`);
    console.warn(
      `\n${"!".repeat(78)}\n!! ${what} tests SKIPPED: nothing answers at ${url} (${why}).\n!! Start it (${start}) or set ${envVar}; under CI=true they are required.\n${"!".repeat(78)}\n`,
    );
    return null;
  }
}

export const findTestRabbit = () => find("RabbitMQ", "RABBITMQ_URL", testRabbitUrl(), 5672, "rabbitmq-server -detached");
export const findTestNats = () => find("NATS", "NATS_URL", testNatsUrl(), 4222, "nats-server -js");
