import mysql from "mysql2/promise";

/**
 * Whether a MariaDB answers at `url` (connecting to `connectUri`, the same server, when the URL's
 * database may not exist yet): the URL, or null outside CI with a loud notice that the MariaDB
 * tests are skipped. Under CI=true it throws: they are required there (as for RabbitMQ and NATS,
 * lib/queues/testing/brokers.ts).
 */
export async function probeMariadb(url: string, connectUri = url): Promise<string | null> {
  try {
    const connection = await mysql.createConnection({ uri: connectUri, connectTimeout: 3000 });
    await connection.end();
    return url;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (process.env.CI === "true") throw new Error(`MariaDB tests need MariaDB under CI: nothing answers at ${url} (${why})`);
    console.warn(
      `\n${"!".repeat(78)}\n!! MariaDB tests SKIPPED: nothing answers at ${url} (${why}).\n!! Start it (service mariadb start) or set MARIADB_URL; under CI=true they are required.\n${"!".repeat(78)}\n`,
    );
    return null;
  }
}
