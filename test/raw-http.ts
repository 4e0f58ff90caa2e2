import http from "node:http";

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  body: string;
  /** The body's bytes as they came (still gzipped when the answer was). */
  bytes: Buffer;
}

/**
 * A request whose target is sent exactly as written: fetch (and the WHATWG URL parser) would
 * resolve a dot segment or a backslash before sending, which is what a test of how a server routes
 * such a path must not have done for it.
 */
export function rawRequest(
  baseUrl: string,
  target: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { hostname, port, path: target, method: options.method ?? "GET", headers: options.headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const bytes = Buffer.concat(chunks);
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: bytes.toString("utf8"), bytes });
        });
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end();
  });
}
