import * as client from "openid-client";
import { type Config, loadConfig } from "../config";
import { OIDC_CALLBACK_PATH, OIDC_POST_LOGOUT_PATH } from "./oidc-paths";

/**
 * The console as an OpenID Connect relying party, through openid-client (the protocol is not
 * written here): discovery, the authorization URL (code flow, PKCE S256, state, nonce), the code
 * exchange with its checks and the ID token's validation, and RP-initiated logout. Configured by
 * OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and PUBLIC_URL (lib/config.ts checks they come
 * together).
 */
/** How long discovery and the token request may take before sign-in answers that the provider is unreachable. */
const PROVIDER_TIMEOUT_SECONDS = 10;

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  publicUrl: string;
  name: string;
  scopes: string;
  groupsClaim: string;
}

/** The single sign-on settings, or null when OIDC is not configured. */
export function oidcSettings(config: Config = loadConfig()): OidcSettings | null {
  if (!config.OIDC_ISSUER || !config.OIDC_CLIENT_ID || !config.OIDC_CLIENT_SECRET || !config.PUBLIC_URL) return null;
  return {
    issuer: config.OIDC_ISSUER,
    clientId: config.OIDC_CLIENT_ID,
    clientSecret: config.OIDC_CLIENT_SECRET,
    publicUrl: config.PUBLIC_URL.replace(/\/+$/, ""),
    name: config.OIDC_NAME ?? new URL(config.OIDC_ISSUER).host,
    scopes: config.OIDC_SCOPES,
    groupsClaim: config.OIDC_GROUPS_CLAIM,
  };
}

function redirectUri(settings: OidcSettings): string {
  return `${settings.publicUrl}${OIDC_CALLBACK_PATH}`;
}

declare global {
  var __onceboardOidcDiscovery: { source: string; metadata: Promise<client.ServerMetadata> } | undefined;
}

/** The provider's metadata, discovered once per process; a failed discovery is tried again on the next sign-in. */
function serverMetadata(settings: OidcSettings): Promise<client.ServerMetadata> {
  const source = `${settings.issuer}\n${settings.clientId}`;
  const cached = globalThis.__onceboardOidcDiscovery;
  if (cached?.source === source) return cached.metadata;
  const metadata = client
    .discovery(new URL(settings.issuer), settings.clientId, undefined, client.ClientSecretBasic(settings.clientSecret), {
      execute: insecure(settings) ? [client.allowInsecureRequests] : [],
      timeout: PROVIDER_TIMEOUT_SECONDS,
    })
    .then((configuration) => configuration.serverMetadata());
  globalThis.__onceboardOidcDiscovery = { source, metadata };
  metadata.catch(() => {
    if (globalThis.__onceboardOidcDiscovery?.metadata === metadata) globalThis.__onceboardOidcDiscovery = undefined;
  });
  return metadata;
}

/** An http:// issuer is allowed only on loopback (a provider on the same machine, as the tests run). */
function insecure(settings: OidcSettings): boolean {
  const url = new URL(settings.issuer);
  return url.protocol === "http:" && (url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]");
}

/**
 * openid-client's configuration at `now`: the ID token's exp, iat and nbf are judged against this
 * clock (its clockSkew), so a test can run the console's clock ahead of the provider's.
 */
async function configuration(settings: OidcSettings, now: Date): Promise<client.Configuration> {
  const metadata = await serverMetadata(settings);
  const skew = Math.round((now.getTime() - Date.now()) / 1000);
  const config = new client.Configuration(
    metadata,
    settings.clientId,
    { [client.clockSkew]: skew },
    client.ClientSecretBasic(settings.clientSecret),
  );
  config.timeout = PROVIDER_TIMEOUT_SECONDS;
  if (insecure(settings)) client.allowInsecureRequests(config);
  return config;
}

/** What the callback needs to check the provider's answer; kept in the flow cookie (lib/auth/oidc-flow.ts). */
export interface AuthorizationChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Where to send the browser to sign in, and the checks its answer must pass. */
export async function authorizationRequest(settings: OidcSettings): Promise<{ url: URL; checks: AuthorizationChecks }> {
  const config = await configuration(settings, new Date());
  const checks = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri(settings),
    scope: settings.scopes,
    response_type: "code",
    code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
    code_challenge_method: "S256",
    state: checks.state,
    nonce: checks.nonce,
  });
  return { url, checks };
}

export interface VerifiedIdToken {
  issuer: string;
  subject: string;
  claims: Record<string, unknown>;
  expiresAt: Date;
  idToken: string;
}

/**
 * Exchanges the code of the provider's answer (`search`: the callback's query) for tokens: state,
 * PKCE and nonce checked, the ID token's signature, issuer, audience and times validated by
 * openid-client. Throws what openid-client throws when any check fails.
 */
export async function exchangeCode(
  settings: OidcSettings,
  search: string,
  checks: AuthorizationChecks,
  now = new Date(),
): Promise<VerifiedIdToken> {
  const config = await configuration(settings, now);
  const currentUrl = new URL(`${redirectUri(settings)}${search}`);
  const tokens = await client.authorizationCodeGrant(config, currentUrl, {
    expectedState: checks.state,
    expectedNonce: checks.nonce,
    pkceCodeVerifier: checks.codeVerifier,
    idTokenExpected: true,
  });
  const claims = tokens.claims();
  if (!claims || !tokens.id_token) throw new Error("the identity provider returned no ID token");
  return {
    issuer: claims.iss,
    subject: claims.sub,
    claims: claims as Record<string, unknown>,
    expiresAt: new Date(claims.exp * 1000),
    idToken: tokens.id_token,
  };
}

/** The provider's RP-initiated logout URL for a session's ID token, or null when it offers none. */
export async function endSessionUrl(settings: OidcSettings, idToken: string): Promise<URL | null> {
  const config = await configuration(settings, new Date());
  if (!config.serverMetadata().end_session_endpoint) return null;
  return client.buildEndSessionUrl(config, {
    id_token_hint: idToken,
    post_logout_redirect_uri: `${settings.publicUrl}${OIDC_POST_LOGOUT_PATH}`,
  });
}
