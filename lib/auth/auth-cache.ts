import { createHash } from "node:crypto";
import pg from "pg";
import { loadConfig } from "../config";
import { getPool } from "../db/pool";

/**
 * Who a Bearer token or a session cookie is, kept in this process for at most
 * ONCEBOARD_AUTH_CACHE_MS, so a request does not read the token (and the session) every time.
 * Revocation still ends access at once:
 * - every change that could end a token or session (revoked, its expiry, role, tenant or secret
 *   changed, the row deleted) notifies channel `onceboard_auth_changed` at its commit (triggers of
 *   migration 20261207010000_auth_change_notify), and each console process LISTENs on a connection
 *   of its own and empties its cache when told; the process that made the change empties its own
 *   before it answers (authChanged());
 * - only while that connection is listening is anything kept or used: when it drops, the cache is
 *   emptied and stays off until LISTEN is back, and a read that began before a notification (or
 *   before LISTEN) is not stored after it (the generation below);
 * - an entry is used at most ONCEBOARD_AUTH_CACHE_MS after its read, and never past the token's or
 *   session's own expiry. That is the bound on staleness should a notification be lost without the
 *   connection noticing (a half-open TCP connection); normally it is the notification's delivery.
 * Only good answers are kept: an unknown or refused credential is read again each time.
 */
export const AUTH_CHANGED_CHANNEL = "onceboard_auth_changed";

const MAX_ENTRIES = 10_000;
const RECONNECT_MS = 1_000;

interface Entry<T> {
  value: T;
  at: number;
  /** Epoch ms past which the token or session itself has ended. */
  notAfter: number;
}

export class AuthCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private generationNow = 0;
  private listening = false;
  private stopped = false;
  private client: pg.Client | null = null;

  constructor(
    private readonly connect: () => pg.Client,
    readonly ttlMs: number,
    /** Whether the cache should still keep its connection (false once its pool is replaced or ended). */
    private readonly wanted: () => boolean = () => true,
  ) {
    void this.listen();
  }

  /** Whether entries are kept and used now: LISTEN is active. */
  get active(): boolean {
    return this.listening && !this.stopped;
  }

  /** Taken before the database read whose answer may be stored with set(). */
  generation(): number {
    return this.generationNow;
  }

  get(key: string, now = Date.now()): T | undefined {
    if (!this.active) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now - entry.at >= this.ttlMs || now >= entry.notAfter) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Keeps `value`, read from the database since generation() answered `generation`, unless something changed since. */
  set(key: string, value: T, generation: number, notAfter: number, now = Date.now()): void {
    if (!this.active || generation !== this.generationNow) return;
    if (this.entries.size >= MAX_ENTRIES) {
      // Oldest first (insertion order): the expired ones go, then the oldest.
      for (const [other, entry] of this.entries) {
        if (now - entry.at < this.ttlMs && this.entries.size < MAX_ENTRIES) break;
        this.entries.delete(other);
      }
    }
    this.entries.set(key, { value, at: now, notAfter });
  }

  /** Forgets everything, and refuses to store what was read before now. */
  clear(): void {
    this.entries.clear();
    this.generationNow++;
  }

  stop(): void {
    this.stopped = true;
    this.listening = false;
    this.clear();
    const client = this.client;
    this.client = null;
    void client?.end().catch(() => {});
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    if (!this.wanted()) {
      this.stop();
      return;
    }
    const client = this.connect();
    this.client = client;
    const down = () => {
      if (this.client !== client) return;
      this.client = null;
      this.listening = false;
      this.clear();
      void client.end().catch(() => {});
      if (!this.stopped) setTimeout(() => void this.listen(), RECONNECT_MS).unref();
    };
    client.on("error", down);
    client.on("end", down);
    client.on("notification", (message) => {
      if (message.channel === AUTH_CHANGED_CHANNEL) this.clear();
    });
    try {
      await client.connect();
      // The connection must not keep a finished process (a CLI, a test) alive.
      (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
      await client.query(`LISTEN ${AUTH_CHANGED_CHANNEL}`);
      if (this.client !== client || this.stopped) return;
      // Reads that began before LISTEN may have missed a change: none of them is stored.
      this.clear();
      this.listening = true;
    } catch {
      down();
    }
  }
}

/** A credential as the cache's key: its SHA-256, so the cache holds no secret. */
export function credentialKey(kind: "bearer" | "session", value: string): string {
  return `${kind}:${createHash("sha256").update(value).digest("base64url")}`;
}

declare global {
  var __onceboardAuthCache: { pool: pg.Pool; ttlMs: number; cache: AuthCache<unknown> } | undefined;
}

/**
 * The console's cache on its own pool's database, or null when ONCEBOARD_AUTH_CACHE_MS is 0. Made
 * again (the old one stopped) when the pool or the setting changes.
 */
export function consoleAuthCache<T>(): AuthCache<T> | null {
  const ttlMs = loadConfig().ONCEBOARD_AUTH_CACHE_MS;
  const current = globalThis.__onceboardAuthCache;
  if (ttlMs === 0) {
    if (current) {
      current.cache.stop();
      globalThis.__onceboardAuthCache = undefined;
    }
    return null;
  }
  const pool = getPool();
  if (current?.pool === pool && current.ttlMs === ttlMs) return current.cache as AuthCache<T>;
  current?.cache.stop();
  const cache = new AuthCache<unknown>(
    () =>
      new pg.Client({ ...(pool as unknown as { options: pg.ClientConfig }).options, application_name: "onceboard-console-auth" }),
    ttlMs,
    () => globalThis.__onceboardPool === pool && !(pool as unknown as { ending?: boolean }).ending,
  );
  globalThis.__onceboardAuthCache = { pool, ttlMs, cache };
  return cache as AuthCache<T>;
}

/**
 * Called by this process right after it ended a token or session, so its own next request cannot
 * be answered from the cache before the notification arrives.
 */
export function authChanged(): void {
  globalThis.__onceboardAuthCache?.cache.clear();
}
