import { BlockList, isIP } from "node:net";
import { loadConfig } from "../config";

/**
 * Who is on the other end of a request, and what of X-Forwarded-* to believe.
 *
 * Next.js gives a proxy or route handler no socket address, and fills X-Forwarded-For itself only
 * when the client sent none, so a forged one reaches the app unchanged. The console's own server
 * (scripts/console-server.ts, what `npm start` runs) therefore writes the TCP peer into
 * PEER_HEADER, replacing whatever the client sent under that name, and marks the process so this
 * module believes the header. Without that server (a bare `next start`, `next dev`, a handler called
 * directly) no peer is known: no proxy is trusted and the client address is unknown.
 */
export const PEER_HEADER = "x-onceboard-peer";

declare global {
  var __onceboardPeerHeaderIsSet: boolean | undefined;
}

/** Called by the server that sets PEER_HEADER on every request from the socket. */
export function announcePeerHeader(): void {
  globalThis.__onceboardPeerHeaderIsSet = true;
}

type HeaderReader = Pick<Headers, "get">;

/** "::ffff:10.0.0.1" → "10.0.0.1": a dual-stack socket reports IPv4 peers that way. */
function normalizeAddress(value: string): string | null {
  let address = value.trim();
  if (address.startsWith("[") && address.endsWith("]")) address = address.slice(1, -1);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) address = mapped[1];
  return isIP(address) === 0 ? null : address.toLowerCase();
}

let cached: { source: string; list: BlockList } | null = null;

function trustedProxies(): BlockList {
  const entries = loadConfig().TRUSTED_PROXIES;
  const source = entries.join(",");
  if (cached?.source === source) return cached.list;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix] = entry.split("/");
    const normalized = normalizeAddress(address) ?? address;
    const type = isIP(normalized) === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(normalized, type);
    else list.addSubnet(normalized, Number(prefix), type);
  }
  cached = { source, list };
  return list;
}

function isTrustedProxy(address: string | null): boolean {
  if (address === null) return false;
  return trustedProxies().check(address, isIP(address) === 6 ? "ipv6" : "ipv4");
}

/** The TCP peer, when the console's server recorded it. */
function peerAddress(headers: HeaderReader): string | null {
  if (globalThis.__onceboardPeerHeaderIsSet !== true) return null;
  const value = headers.get(PEER_HEADER);
  return value ? normalizeAddress(value) : null;
}

/** Whether this request came through one of TRUSTED_PROXIES (only then are its X-Forwarded-* believed). */
function fromTrustedProxy(headers: HeaderReader): boolean {
  return isTrustedProxy(peerAddress(headers));
}

/**
 * The client address: the peer, unless the peer is a trusted proxy; then the right-most entry of
 * X-Forwarded-For that is not itself a trusted proxy (entries left of it were written by the client
 * and prove nothing), else X-Real-IP. null when no peer is known.
 */
export function clientIpOf(headers: HeaderReader): string | null {
  const peer = peerAddress(headers);
  if (!isTrustedProxy(peer)) return peer;
  const forwarded = (headers.get("x-forwarded-for") ?? "").split(",").map((entry) => normalizeAddress(entry));
  for (let i = forwarded.length - 1; i >= 0; i--) {
    const entry = forwarded[i] ?? null;
    if (entry === null) break;
    if (!isTrustedProxy(entry)) return entry;
  }
  const realIp = headers.get("x-real-ip");
  return (realIp ? normalizeAddress(realIp) : null) ?? peer;
}

export function clientIp(request: Request): string | null {
  return clientIpOf(request.headers);
}

/** "https" or "http": X-Forwarded-Proto from a trusted proxy, else http (the console's server speaks plain http). */
export function requestScheme(headers: HeaderReader): "http" | "https" {
  if (fromTrustedProxy(headers)) {
    const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    if (proto === "https" || proto === "http") return proto;
  }
  return "http";
}

/** The Host the client asked for: X-Forwarded-Host from a trusted proxy, else Host. */
export function requestHost(headers: HeaderReader): string | null {
  const forwarded = fromTrustedProxy(headers) ? headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
  return forwarded || headers.get("host") || null;
}

/**
 * The console's own origin (scheme://host[:port]): PUBLIC_URL's when set, else this request's, from
 * its Host and its trusted scheme. null when neither says.
 */
export function consoleOrigin(headers: HeaderReader): string | null {
  const publicUrl = loadConfig().PUBLIC_URL;
  if (publicUrl) return new URL(publicUrl).origin;
  const host = requestHost(headers);
  if (!host) return null;
  try {
    return new URL(`${requestScheme(headers)}://${host}`).origin;
  } catch {
    return null;
  }
}

/** Whether the client reached the console over https (PUBLIC_URL's scheme, or a trusted proxy's word). */
export function servedOverHttps(headers: HeaderReader): boolean {
  const publicUrl = loadConfig().PUBLIC_URL;
  if (publicUrl) return new URL(publicUrl).protocol === "https:";
  return requestScheme(headers) === "https";
}
