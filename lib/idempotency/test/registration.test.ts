import net from "node:net";
import pg from "pg";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createEffects } from "../index";
import { withEachEngine } from "./engine-suite";
import { type EngineDatabase, mariadbPool } from "./engines";
import { captureLogger, sleep } from "./helpers";

/**
 * A worker registers its declared retry window and takes the retention from the
 * database by default, and a database that is not there yet at start delays the registration
 * (the worker keeps trying) instead of leaving the worker unregistered for good.
 */
let db: EngineDatabase;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  (engine) =>
    describe("worker registration", () => {
      it("is on by default: the worker's row exists after ready(), the database retention replaces the option, close() removes the row", async () => {
        const effects = createEffects({
          db: db.pool,
          schema: db.schema,
          registry: new Registry(),
          logger: captureLogger().logger,
          retention: "30d",
          maxRetryWindow: "3d",
          workerId: "w-default",
          rollups: false,
          flushInterval: 0,
        });
        await effects.ready();
        const rows = await db.rows<{ max_retry_window_seconds: number }>(
          "SELECT max_retry_window_seconds FROM worker_registrations WHERE worker_id = 'w-default'",
        );
        expect(rows.map((r) => Number(r.max_retry_window_seconds))).toEqual([3 * 86_400]);
        expect(effects.options.retentionMs).toBe(7 * 86_400_000);
        await effects.close();
        expect(await db.rows("SELECT 1 FROM worker_registrations WHERE worker_id = 'w-default'")).toEqual([]);
      });

      it("records this process's start once under its workerName, and prunes the name's starts older than a month", async () => {
        await db.rows(
          "INSERT INTO worker_starts (worker_name, process_started_at, host, pid, worker_id, recorded_at) VALUES ('w-starts', '2020-01-01 00:00:00', 'old-host', 1, 'w-old', '2020-01-01 00:00:00')",
        );
        const make = (workerId: string) =>
          createEffects({
            db: db.pool,
            schema: db.schema,
            registry: new Registry(),
            logger: captureLogger().logger,
            workerId,
            workerName: "w-starts",
            rollups: false,
            flushInterval: 0,
          });
        // Two createEffects in one process: one start.
        const first = make("w-starts-1");
        const second = make("w-starts-2");
        await Promise.all([first.ready(), second.ready()]);
        const rows = await db.rows<{ host: string; pid: number }>(
          "SELECT host, pid FROM worker_starts WHERE worker_name = 'w-starts'",
        );
        expect(rows.map((r) => Number(r.pid))).toEqual([process.pid]);
        await Promise.all([first.close(), second.close()]);
      });

      it("keeps trying while the database is unreachable at start, then registers", async () => {
        const target = new URL(db.url);
        const port = await freePort();
        const url = new URL(db.url);
        url.host = `127.0.0.1:${port}`;
        const pool =
          engine === "postgres"
            ? new pg.Pool({ connectionString: url.toString(), max: 2, connectionTimeoutMillis: 2000 })
            : mariadbPool(url.toString(), db.schema, 2);
        if (pool instanceof pg.Pool) pool.on("error", () => {});
        const { logger, lines } = captureLogger();
        const effects = createEffects({
          db: pool,
          schema: db.schema,
          registry: new Registry(),
          logger,
          workerId: "w-late",
          rollups: false,
          flushInterval: 0,
        });
        let registered = false;
        const ready = effects.ready().then(() => {
          registered = true;
        });
        // Nothing listens on the port yet: the first read fails with a connection error.
        for (let i = 0; i < 100 && !lines.some((l) => String(l.msg).includes("database not reachable")); i++) await sleep(50);
        expect(lines.some((l) => String(l.msg).includes("database not reachable"))).toBe(true);
        expect(registered).toBe(false);
        // The database "comes up": a proxy to the real server starts listening on that port.
        const proxy = net.createServer((socket) => {
          const upstream = net.connect(Number(target.port || (engine === "postgres" ? 5432 : 3306)), target.hostname);
          socket.pipe(upstream).pipe(socket);
          socket.on("error", () => upstream.destroy());
          upstream.on("error", () => socket.destroy());
        });
        await new Promise<void>((resolve) => proxy.listen(port, "127.0.0.1", resolve));
        try {
          await ready;
          expect(await db.rows("SELECT 1 FROM worker_registrations WHERE worker_id = 'w-late'")).toHaveLength(1);
          await effects.close();
        } finally {
          await pool.end();
          proxy.close();
        }
      });
    }),
  { poolSize: 2 },
);
