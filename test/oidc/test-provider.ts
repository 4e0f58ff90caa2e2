import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/**
 * A real OpenID Provider for the single sign-on tests: oidc-provider (a certified implementation),
 * on a free loopback port, with its own development login and consent pages (any password is
 * accepted; the login name picks the account). One confidential client, the console, with PKCE
 * required and RP-initiated logout. Used in-process by the Vitest tests and by scripts/e2e.ts for
 * the browser tests.
 */
export const TEST_CLIENT_ID = "onceboard-console";
export const TEST_CLIENT_SECRET = "test-client-secret-that-is-long-enough-0123456789";

/** The accounts, by login name: each one's groups claim. */
export const TEST_ACCOUNTS: Record<string, { name: string; email: string; groups: string[] }> = {
  "platform-admin": { name: "Pat Platform", email: "pat@example.com", groups: ["staff", "onceboard-platform-admin"] },
  "acme-viewer": { name: "Ann Acme", email: "ann@acme.example", groups: ["staff", "onceboard-tenant-acme-viewer"] },
  "acme-operator": {
    name: "Otto Acme",
    email: "otto@acme.example",
    groups: ["onceboard-tenant-acme-viewer", "onceboard-tenant-acme-operator"],
  },
  "two-tenants": {
    name: "Tia Two",
    email: "tia@example.com",
    groups: ["onceboard-tenant-acme-viewer", "onceboard-tenant-globex-viewer"],
  },
  nobody: { name: "Ned Nobody", email: "ned@example.com", groups: ["staff", "marketing"] },
};

export interface TestProvider {
  issuer: string;
  /** Seconds an ID token is valid, from now on (default: oidc-provider's 3600). */
  setIdTokenTtl(seconds: number): void;
  close(): Promise<void>;
}

export async function startTestProvider(options: { consoleUrl: string; port?: number }): Promise<TestProvider> {
  let idTokenTtl = 3600;
  const idTokenSeconds = () => idTokenTtl;
  const consoleUrl = options.consoleUrl.replace(/\/+$/, "");
  // The issuer needs its port before the provider exists: listen first, then mount the provider.
  const { createServer } = await import("node:http");
  let handler: ((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void) | null = null;
  const server = createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: TEST_CLIENT_ID,
        client_secret: TEST_CLIENT_SECRET,
        redirect_uris: [`${consoleUrl}/api/auth/oidc/callback`],
        post_logout_redirect_uris: [`${consoleUrl}/login`],
        response_types: ["code"],
        grant_types: ["authorization_code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    // The groups ride on the openid scope, so the console's default scopes receive them.
    claims: { openid: ["sub", "groups"], profile: ["name"], email: ["email"] },
    // In the ID token itself, not only from the userinfo endpoint: the console reads the ID token.
    conformIdTokenClaims: false,
    ttl: { IdToken: idTokenSeconds },
    cookies: { keys: ["test-provider-cookie-key-0123456789abcdef"] },
    async findAccount(_ctx, id) {
      const account = TEST_ACCOUNTS[id];
      return {
        accountId: id,
        async claims() {
          return account ? { sub: id, name: account.name, email: account.email, groups: account.groups } : { sub: id };
        },
      };
    },
  });
  handler = provider.callback();
  return {
    issuer,
    setIdTokenTtl(seconds) {
      idTokenTtl = seconds;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
