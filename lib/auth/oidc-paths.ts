import { type Config, loadConfig } from "../config";

/**
 * The console's single sign-on addresses, apart from the client itself (lib/auth/oidc-client.ts),
 * so the proxy and the security headers can name them without loading openid-client.
 */
export const OIDC_START_PATH = "/api/auth/oidc/start";
/** Registered at the provider as the redirect URI: PUBLIC_URL + this. */
export const OIDC_CALLBACK_PATH = "/api/auth/oidc/callback";
/** Registered at the provider as the post-logout redirect URI: PUBLIC_URL + this. */
export const OIDC_POST_LOGOUT_PATH = "/login";

/** The provider's origin, when single sign-on is configured: the logout form is sent on there (the CSP's form-action). */
export function oidcProviderOrigin(config: Config = loadConfig()): string | null {
  return config.OIDC_ISSUER ? new URL(config.OIDC_ISSUER).origin : null;
}
