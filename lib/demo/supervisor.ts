import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { type DemoBrokerUrls, setupDemoBroker } from "./broker";
import { crashFaultLine } from "./handlers";
import { DEMO_PROVIDER_ENV, type DemoProviderEndpoints, installDemoProviderSchema, newDemoApiKey } from "./provider";
import type { DemoSettings } from "./settings";
import { DEMO_APP_PREFIX } from "./settings";
import { DEMO_SHOP_URL_ENV, prepareMariadbShop } from "./shop";

const ROOT = path.resolve(import.meta.dirname, "../..");

export interface DemoProcesses {
  /** One /metrics URL per worker; stable across worker restarts (same port). */
  metricsUrls: string[];
  /** Where the demo's provider process listens (stable across its restarts), and the key it accepts. */
  provider: DemoProviderEndpoints;
  /** Resolves when every worker answers on /metrics and the provider process on its ports. */
  ready(timeoutMs?: number): Promise<void>;
  /** Stops the producer only (the workers drain what is queued). */
  stopProducer(): Promise<void>;
  /** How many times a worker exited unexpectedly and was restarted (the crash fault). */
  restarts(): number;
  /** Stops every child (SIGTERM, then SIGKILL after `graceMs`); nothing is restarted from the first call on. */
  stop(graceMs?: number): Promise<void>;
}

interface StartDemoOptions {
  url: string;
  settings: DemoSettings;
  /**
   * settings.store mariadb: the MariaDB database (a mysql:// URL naming it) where the effects and
   * the shop's tables go; made ready here (the library migrated, the shop's tables made).
   */
  shopUrl?: string;
  /** RabbitMQ's and NATS's URLs, for settings.broker other than pg-boss (the children read theirs from the environment). */
  brokerUrls?: DemoBrokerUrls;
  /** Where worker and producer output goes (one file each); default: inherited stderr only. */
  logDir?: string;
  /**
   * Called for every process spawned (workers are respawned after the crash fault). `marker` is
   * a string of the child's command line (the script name), as RunRegistry expects.
   */
  onSpawn?: (pid: number | undefined, marker: string) => void;
  log?: (line: string) => void;
  /** A free loopback port for each worker's /metrics (the caller's; the demo has no port helper of its own). */
  freePort: () => Promise<number>;
  /** Start the producer (default true). */
  producer?: boolean;
}

/**
 * Whether the worker `pid` logged its crash fault before dying: only then is the death the demo's
 * own doing and not a real crash (the OOM killer, a bug). The line is among the log's last bytes.
 */
export function injectedCrash(logFile: string, pid: number): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(logFile, "r");
    const size = fs.fstatSync(fd).size;
    const length = Math.min(size, 16_384);
    const tail = Buffer.alloc(length);
    fs.readSync(fd, tail, 0, length, size - length);
    return tail.toString("utf8").includes(crashFaultLine(pid));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * The line the supervisor prints when a demo child died and is started again. A crash the demo
 * injected says so (the worker logged its crash fault just before), so nobody reading the terminal
 * takes the demo's own SIGKILLs for real crashes; a real one says nothing more.
 */
export function restartLine(
  marker: string,
  death: { code: number | null; signal: NodeJS.Signals | null },
  log: { file: string; pid: number } | undefined,
): string {
  const injected = log !== undefined && injectedCrash(log.file, log.pid);
  return `${marker} exited (${death.signal ?? `code ${death.code}`}${injected ? ", injected fault" : ""}); starting it again`;
}

/** How often at most the terminal hears of the demo's injected crashes (issue 35: 33 lines in 39 minutes scrolled the login link away). */
export const INJECTED_FAULT_SUMMARY_MS = 60_000;

/**
 * The demo's injected crashes, said at most once per INJECTED_FAULT_SUMMARY_MS: the first at once
 * (so the terminal shows the fault is on), then one line per interval that had any, counting each
 * child's restarts. A real crash never waits here: the supervisor prints it as it happens.
 */
export class InjectedFaultSummary {
  private readonly pending = new Map<string, number>();
  private total = 0;
  private lastSaidAt: number | null = null;

  constructor(
    private readonly log: (line: string) => void,
    private readonly clock: {
      now(): number;
      schedule(run: () => void, ms: number): { cancel(): void };
    } = {
      now: () => Date.now(),
      schedule: (run, ms) => {
        const t = setTimeout(run, ms);
        t.unref();
        return { cancel: () => clearTimeout(t) };
      },
    },
  ) {}

  private scheduled: { cancel(): void } | null = null;

  /** One injected crash of `marker` (restarted by the supervisor). */
  record(marker: string): void {
    this.pending.set(marker, (this.pending.get(marker) ?? 0) + 1);
    this.total++;
    const now = this.clock.now();
    const due = this.lastSaidAt === null ? now : this.lastSaidAt + INJECTED_FAULT_SUMMARY_MS;
    if (due <= now) this.say();
    else this.scheduled ??= this.clock.schedule(() => this.say(), due - now);
  }

  /** Says what is pending now (at a stop, so nothing counted goes unsaid). */
  flush(): void {
    this.scheduled?.cancel();
    if (this.pending.size > 0) this.say();
  }

  private say(): void {
    this.scheduled = null;
    if (this.pending.size === 0) return;
    const first = this.lastSaidAt === null;
    const parts = [...this.pending].map(([marker, n]) => (n === 1 ? marker : `${marker} ×${n}`));
    const n = [...this.pending.values()].reduce((a, b) => a + b, 0);
    this.pending.clear();
    this.lastSaidAt = this.clock.now();
    this.log(
      `${n} demo process${n === 1 ? "" : "es"} killed by the demo's crash fault (injected, not a real crash) and restarted: ${parts.join(", ")}; ${this.total} since start${first ? ` (said at most once a minute from now on; DEMO_CRASH sets how often)` : ""}`,
    );
  }
}

/**
 * Runs the demo as child processes: the provider process (the Stripe-compatible server and the
 * mailer), `settings.workers` workers (each with /metrics on its own port) and one producer. A
 * child that dies (the crash fault kills workers with SIGKILL) is started again on the same
 * ports, like a process manager would.
 */
export async function startDemoProcesses(options: StartDemoOptions): Promise<DemoProcesses> {
  const log = options.log ?? (() => {});
  // The broker's queues (pg-boss: its schema and partitions), made once here rather than raced by every child.
  await setupDemoBroker(options.settings, options.url, options.brokerUrls);
  // The provider's storage, made once here (its process and a restarted one find it made).
  const setup = new pg.Client({ connectionString: options.url, application_name: `${DEMO_APP_PREFIX}-setup` });
  await setup.connect();
  try {
    await installDemoProviderSchema(setup);
  } finally {
    await setup.end().catch(() => {});
  }
  if (options.settings.store === "mariadb") {
    if (!options.shopUrl) throw new Error("the demo on MariaDB needs the shop's database (shopUrl)");
    await prepareMariadbShop(options.shopUrl);
  }
  const ports = await Promise.all(Array.from({ length: options.settings.workers }, () => options.freePort()));
  const metricsUrls = ports.map((p) => `http://127.0.0.1:${p}/metrics`);
  const provider: DemoProviderEndpoints = {
    apiKey: newDemoApiKey(),
    stripePort: options.settings.providerPort || (await options.freePort()),
    mailerUrl: `http://127.0.0.1:${options.settings.mailerPort || (await options.freePort())}/mailer/messages`,
  };
  const env = {
    ...process.env,
    DATABASE_URL: options.url,
    ONCEBOARD_DEMO_SETTINGS: JSON.stringify(options.settings),
    [DEMO_PROVIDER_ENV]: JSON.stringify(provider),
    ...(options.settings.store === "mariadb" && options.shopUrl ? { [DEMO_SHOP_URL_ENV]: options.shopUrl } : {}),
  };
  if (options.logDir) fs.mkdirSync(options.logDir, { recursive: true });
  let stopping = false;
  let restarts = 0;
  const faults = new InjectedFaultSummary(log);
  const live = new Map<string, ChildProcess>();
  /** Children stopped on purpose: their exit is not a crash to recover from. */
  const retired = new WeakSet<ChildProcess>();

  const launch = (marker: string, script: string, args: string[]) => {
    const out = options.logDir ? fs.openSync(path.join(options.logDir, `${marker}.log`), "a") : "ignore";
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "scripts", script), ...args, "--parent-pid", String(process.pid)],
      { cwd: ROOT, env, stdio: ["ignore", out, options.logDir ? out : "inherit"] },
    );
    if (typeof out === "number") fs.closeSync(out);
    live.set(marker, child);
    options.onSpawn?.(child.pid, script.replace(/\.ts$/, ""));
    child.on("exit", (code, signal) => {
      if (live.get(marker) === child) live.delete(marker);
      // A clean exit is a stop someone asked for (a signal to the process group, a process
      // manager stopping the stack): only a crash is recovered from.
      if (stopping || retired.has(child) || code === 0) return;
      restarts++;
      const childLog =
        options.logDir && child.pid !== undefined
          ? { file: path.join(options.logDir, `${marker}.log`), pid: child.pid }
          : undefined;
      // The demo's own crashes are summarised; a real one is said at once, as it happens.
      if (childLog && injectedCrash(childLog.file, childLog.pid)) faults.record(marker);
      else log(restartLine(marker, { code, signal }, childLog));
      setTimeout(() => {
        if (!stopping) launch(marker, script, args);
      }, 500).unref();
    });
  };

  launch("demo-provider", "demo-provider.ts", []);
  ports.forEach((port, index) => {
    launch(`demo-worker-${index}`, "demo-worker.ts", ["--index", String(index), "--metrics-port", String(port)]);
  });
  let producerStopped = false;
  if (options.producer ?? true) launch("demo-producer", "demo-producer.ts", []);

  const stopChild = (child: ChildProcess, graceMs = 10_000) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM");
    });

  return {
    metricsUrls,
    provider,
    async ready(timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      // The mailer answers a list request without a key; any answer from the Stripe port (401) is "listening".
      for (const url of [...metricsUrls, `http://127.0.0.1:${provider.stripePort}/v1/payment_intents`, provider.mailerUrl]) {
        for (;;) {
          try {
            const res = await fetch(url);
            if (res.ok || res.status === 401) break;
          } catch {
            // not listening yet
          }
          if (Date.now() > deadline) throw new Error(`demo process at ${url} did not answer within ${timeoutMs / 1000}s`);
          await sleep(250);
        }
      }
    },
    async stopProducer() {
      if (producerStopped) return;
      producerStopped = true;
      const producer = live.get("demo-producer");
      if (!producer) return;
      retired.add(producer);
      live.delete("demo-producer");
      await stopChild(producer);
    },
    restarts: () => restarts,
    async stop(graceMs?: number) {
      stopping = true;
      faults.flush();
      await Promise.all([...live.values()].map((child) => stopChild(child, graceMs)));
    },
  };
}
