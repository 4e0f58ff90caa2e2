import { DomainError } from "../console/errors";
import type { Principal } from "./auth-types";

/**
 * Whose rows a read may return: the platform (every tenant, or the one it narrowed to), or exactly
 * one tenant. Every read model of lib/console and lib/retention that reads tenant data takes one,
 * and the tenant filter comes from it, never from the URL.
 *
 * Only the auth layer makes one: withAuth hands it to route handlers, requirePageScope to pages,
 * both from the request's authenticated principal; command-line tools, which hold the database URL
 * themselves, take `operator()`. Outside lib/auth (and tests, scripts and benchmarks) this module
 * may be imported as a type only (scripts/check-layers.mjs), and the private constructor and fields
 * make the type nominal: an object literal is not a Scope.
 */
export class Scope {
  readonly #platform: boolean;
  readonly #tenant: string | null;

  private constructor(platform: boolean, tenant: string | null) {
    this.#platform = platform;
    this.#tenant = tenant;
  }

  /** The scope of an authenticated principal: a tenant token's tenant, or the platform. */
  static ofPrincipal(principal: Pick<Principal, "tenantId">): Scope {
    return new Scope(principal.tenantId === null, principal.tenantId);
  }

  /** The platform scope of an operator's command-line tool (it connects with the database URL itself). */
  static operator(): Scope {
    return new Scope(true, null);
  }

  /** The principal spans tenants (a platform token), whether or not this scope narrowed to one. */
  get platform(): boolean {
    return this.#platform;
  }

  /** The one tenant whose rows this scope reads; null: every tenant (a platform scope that named none). */
  get tenant(): string | null {
    return this.#tenant;
  }

  /**
   * The scope of a request that names a tenant (?tenant=): a tenant scope stays its own tenant
   * whatever it asks for; a platform scope narrows to the tenant it names, or stays every tenant.
   */
  narrow(requested?: string | null): Scope {
    if (!this.#platform || requested === undefined || requested === null || requested === "") return this;
    return new Scope(true, requested);
  }

  /** The one tenant of a question that needs exactly one (a key, a search): a platform scope must have narrowed. */
  oneTenant(): string {
    if (this.#tenant === null)
      throw new DomainError("INVALID_INPUT", "tenant is required: a platform token must pass ?tenant=<id>");
    return this.#tenant;
  }

  /** Refuses a tenant scope (FORBIDDEN: a 403 from a route) for data that spans every tenant; `what` says what it is. */
  requirePlatform(what: string): void {
    if (!this.#platform) throw new DomainError("FORBIDDEN", `${what} spans every tenant: it needs a platform token`);
  }
}
