import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time over a phase, read from /proc: this process's, the database server's (every process
 * named `postgres` on this machine, so only when the server runs here: the embedded one, or a
 * DATABASE_URL on localhost) and how busy the whole machine was. Off Linux, or with the server
 * elsewhere, the parts that cannot be read are null.
 */
export interface CpuMark {
  process: NodeJS.CpuUsage;
  postgresUs: number | null;
  machine: { idle: number; total: number } | null;
}

/** The kernel's clock ticks per second for /proc's utime and stime (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

function postgresCpuUs(): number | null {
  try {
    let ticks = 0;
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "postgres") continue;
        // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
        const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
        ticks += Number(fields[11]) + Number(fields[12]);
      } catch {
        // The process ended between the listing and the read.
      }
    }
    return (ticks * 1e6) / USER_HZ;
  } catch {
    return null;
  }
}

function machineTicks(): CpuMark["machine"] {
  try {
    const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    // user nice system idle iowait …: idle and iowait are the idle time.
    return { idle: (cpu[3] ?? 0) + (cpu[4] ?? 0), total: cpu.reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

export function isLocalServer(url: string): boolean {
  const host = new URL(url).hostname;
  return host === "" || host === "localhost" || host === "127.0.0.1" || host === "[::1]";
}

export function cpuMark(serverIsLocal: boolean): CpuMark {
  return { process: process.cpuUsage(), postgresUs: serverIsLocal ? postgresCpuUs() : null, machine: machineTicks() };
}

export interface CpuSpent {
  processUs: number;
  postgresUs: number | null;
  /** Share of all cores busy over the phase, 0–1. */
  machineBusy: number | null;
}

export function cpuSince(start: CpuMark): CpuSpent {
  const end = cpuMark(start.postgresUs !== null);
  const used = process.cpuUsage(start.process);
  const machine =
    start.machine && end.machine && end.machine.total > start.machine.total
      ? 1 - (end.machine.idle - start.machine.idle) / (end.machine.total - start.machine.total)
      : null;
  return {
    processUs: used.user + used.system,
    postgresUs: start.postgresUs !== null && end.postgresUs !== null ? end.postgresUs - start.postgresUs : null,
    machineBusy: machine,
  };
}

/**
 * CPU of one PostgreSQL node's backends serving one database, read from /proc by their pids
 * (pg_stat_activity): the share of a node a workload uses, apart from anything else the server runs
 * (other databases, other users of a shared server). A backend that exits between two samples takes
 * its time with it: the benchmark's pools keep theirs open, and so does Citus between a coordinator
 * and its workers (citus.max_cached_conns_per_worker).
 */
export interface NodeCpu {
  /** What the node is: `server` (one PostgreSQL), `coordinator`, `worker 9701`. */
  role: string;
  /** Backend CPU µs by pid, now. */
  sample(): Promise<Map<number, number>>;
  close(): Promise<void>;
}

function processCpuUs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / USER_HZ;
  } catch {
    return null;
  }
}

/** A NodeCpu over `client`'s server (on this machine) and database. */
export function nodeCpu(
  role: string,
  client: { query(text: string): Promise<{ rows: unknown[] }>; end(): Promise<void> },
): NodeCpu {
  return {
    role,
    async sample() {
      const { rows } = await client.query(
        "SELECT pid FROM pg_catalog.pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
      );
      const cpu = new Map<number, number>();
      for (const { pid } of rows as { pid: number }[]) {
        const us = processCpuUs(pid);
        if (us !== null) cpu.set(pid, us);
      }
      return cpu;
    },
    close: () => client.end(),
  };
}

/** CPU µs the backends used between two samples (a backend new since the first counts from zero). */
export function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let us = 0;
  for (const [pid, end] of after) us += end - (before.get(pid) ?? 0);
  return us;
}
