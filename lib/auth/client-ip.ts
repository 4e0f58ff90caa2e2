/**
 * The client address for the audit log. The console listens on 127.0.0.1 unless told otherwise;
 * behind a reverse proxy the proxy's X-Forwarded-For / X-Real-IP names the client (first entry).
 */
export function clientIp(request: Request): string | null {
  return clientIpOf(request.headers);
}

/** clientIp from the headers alone (a server component has no Request). */
export function clientIpOf(headers: Pick<Headers, "get">): string | null {
  const forwarded = headers.get("x-forwarded-for");
  const first = forwarded?.split(",")[0]?.trim();
  const value = first || headers.get("x-real-ip")?.trim() || null;
  return value ? value.slice(0, 100) : null;
}
