import { setTimeout as sleep } from "node:timers/promises";
import type { SoakWorkerConfig, WorkerMessage } from "./protocol";
import { runSoakWorker, type StopSoakWorker } from "./worker";

/** Entry point of one soak worker process (spawned by lib/soak/supervisor.ts with an IPC channel). */
const config = JSON.parse(process.env.ONCEBOARD_SOAK_WORKER ?? "null") as SoakWorkerConfig | null;
if (!config || !process.send) {
  process.stderr.write("onceboard: soak worker: started without its configuration; run `npm run soak`\n");
  process.exit(1);
}
const send = (m: WorkerMessage) => {
  if (process.connected) process.send?.(m);
};
process.on("unhandledRejection", (error) => {
  process.stderr.write(
    `soak worker ${process.pid}: unhandled rejection: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
});
// The supervisor gone (killed) means nobody restarts or stops us: leave.
process.on("disconnect", () => process.exit(0));
// A worker restarted while PostgreSQL is restarting waits for it rather than crash-looping.
let stop: StopSoakWorker;
for (let attempt = 1; ; attempt++) {
  try {
    stop = await runSoakWorker(config, send);
    break;
  } catch (error) {
    if (attempt >= 120) throw error;
    await sleep(500);
  }
}
let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  send({ type: "stopped", ...(await stop()) });
  setTimeout(() => process.exit(0), 50);
};
process.on("SIGTERM", () => void shutdown());
process.on("message", (m: { type: string }) => {
  if (m.type === "stop") void shutdown();
});
