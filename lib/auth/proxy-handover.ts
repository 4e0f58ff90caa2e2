import { randomBytes } from "node:crypto";
import type { Authenticated } from "./authenticate";

/**
 * The proxy (proxy.ts) and withAuth both check who an API request is: two locks, so a route that
 * forgot withAuth is still behind the proxy, and a path the proxy's matcher missed is still behind
 * withAuth. Both used to ask the database, one more round trip per request. Now the proxy hands its
 * answer over for that one request: it keeps it in this process under a random reference and sets
 * the reference as a request header (after deleting whatever the client sent under that name);
 * withAuth takes it back, once. A reference is 128 random bits, honoured once, only with the
 * credentials it was made for and only for 10 s. Without one (a handler called directly, as tests
 * do; a proxy that ran in another process), withAuth asks the database itself.
 */
export const HANDOVER_HEADER = "x-onceboard-auth-ref";

const TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  auth: Authenticated;
  credentials: string;
  at: number;
}

declare global {
  var __onceboardAuthHandover: Map<string, Entry> | undefined;
}

function entries(): Map<string, Entry> {
  globalThis.__onceboardAuthHandover ??= new Map();
  return globalThis.__onceboardAuthHandover;
}

function credentialsOf(headers: Headers): string {
  return `${headers.get("authorization") ?? ""}\n${headers.get("cookie") ?? ""}`;
}

/** Called by the proxy once it has authenticated `headers`: the reference to forward. */
export function handOver(auth: Authenticated, headers: Headers, now = Date.now()): string {
  const map = entries();
  // Oldest first (insertion order): drop the expired ones, and the oldest when a flood fills it.
  for (const [ref, entry] of map) {
    if (now - entry.at < TTL_MS && map.size < MAX_ENTRIES) break;
    map.delete(ref);
  }
  const ref = randomBytes(16).toString("base64url");
  map.set(ref, { auth, credentials: credentialsOf(headers), at: now });
  return ref;
}

/** Called by withAuth: the proxy's answer for this request, or null (then ask the database). */
export function takeOver(headers: Headers, now = Date.now()): Authenticated | null {
  const ref = headers.get(HANDOVER_HEADER);
  if (!ref) return null;
  const map = entries();
  const entry = map.get(ref);
  if (!entry) return null;
  map.delete(ref);
  if (now - entry.at >= TTL_MS || entry.credentials !== credentialsOf(headers)) return null;
  return entry.auth;
}
