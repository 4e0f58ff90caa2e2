import { describe, expect, it } from "vitest";
import { ApiError, toApiError } from "../api/errors";
import { DomainError } from "../console/errors";
import { Scope } from "./scope";

const tenant = { tenantId: "acme" };
const platform = { tenantId: null };

describe("Scope", () => {
  it("a tenant scope reads its own tenant whatever it asks for", () => {
    const scope = Scope.ofPrincipal(tenant);
    expect(scope.platform).toBe(false);
    expect(scope.tenant).toBe("acme");
    expect(scope.narrow("globex").tenant).toBe("acme");
    expect(scope.narrow(null).tenant).toBe("acme");
    expect(scope.narrow("globex").oneTenant()).toBe("acme");
  });

  it("a platform scope reads every tenant, or narrows to the one it names", () => {
    const scope = Scope.ofPrincipal(platform);
    expect(scope.platform).toBe(true);
    expect(scope.tenant).toBeNull();
    expect(scope.narrow("").tenant).toBeNull();
    expect(scope.narrow("globex").tenant).toBe("globex");
    expect(scope.narrow("globex").platform).toBe(true);
    expect(() => scope.oneTenant()).toThrow(/tenant is required: a platform token must pass \?tenant=<id>/);
  });

  it("platform-only data refuses a tenant scope with 403 naming what it is", () => {
    expect(() => Scope.ofPrincipal(tenant).requirePlatform("the plan")).toThrow(
      expect.objectContaining({ code: "FORBIDDEN", message: "the plan spans every tenant: it needs a platform token" }),
    );
    expect(() => Scope.operator().narrow("acme").requirePlatform("the plan")).not.toThrow();
  });

  it("refuses with a domain error, which the route layer maps to its status (lib/auth names no HTTP status)", () => {
    const refusal = (() => {
      try {
        Scope.ofPrincipal(platform).oneTenant();
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(DomainError);
    expect(refusal).not.toBeInstanceOf(ApiError);
    expect(toApiError(refusal)).toMatchObject({ code: "INVALID_INPUT", status: 400 });
    const forbidden = (() => {
      try {
        Scope.ofPrincipal(tenant).requirePlatform("the plan");
      } catch (error) {
        return error;
      }
    })();
    expect(forbidden).toBeInstanceOf(DomainError);
    expect(toApiError(forbidden)).toMatchObject({ code: "FORBIDDEN", status: 403 });
  });

  it("cannot be made outside the auth layer: an object literal or a constructor call does not type-check", () => {
    // These lines are checked by `npx tsc --noEmit`: were Scope structural or its constructor
    // public, the @ts-expect-error comments would themselves be errors.
    // @ts-expect-error: an object literal is not a Scope (private fields make the type nominal)
    const literal: Scope = { tenant: "globex", platform: true };
    // @ts-expect-error: the constructor is private
    const constructed = new Scope(true, "globex");
    expect([literal, constructed]).toHaveLength(2);
  });
});
