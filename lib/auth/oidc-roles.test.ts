import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config";
import { decideRole, groupsOfClaim, loadRoleMapping } from "./oidc-roles";

/** Groups → one role in one scope, never a default; and the OIDC settings come all together. */
describe("roles from groups", () => {
  it("maps the naming convention to the platform or one tenant", () => {
    expect(decideRole(["onceboard-platform-viewer"], null)).toEqual({
      kind: "granted",
      grant: { role: "viewer", tenantId: null },
    });
    expect(decideRole(["onceboard-tenant-acme-operator"], null)).toEqual({
      kind: "granted",
      grant: { role: "operator", tenantId: "acme" },
    });
    // A tenant id with dashes keeps them: the role is the last part.
    expect(decideRole(["onceboard-tenant-acme-eu-1-admin"], null)).toEqual({
      kind: "granted",
      grant: { role: "admin", tenantId: "acme-eu-1" },
    });
  });

  it("gives no role for unmapped or malformed groups, never a default", () => {
    for (const groups of [
      [],
      ["staff"],
      ["onceboard-platform-root"],
      ["onceboard-tenant--viewer"],
      ["Onceboard-Platform-Admin"],
    ]) {
      expect(decideRole(groups, null).kind, JSON.stringify(groups)).toBe("no-role");
    }
  });

  it("takes the strongest role within one scope", () => {
    expect(decideRole(["onceboard-tenant-acme-viewer", "onceboard-tenant-acme-admin", "staff"], null)).toEqual({
      kind: "granted",
      grant: { role: "admin", tenantId: "acme" },
    });
    expect(decideRole(["onceboard-platform-viewer", "onceboard-platform-operator"], null)).toEqual({
      kind: "granted",
      grant: { role: "operator", tenantId: null },
    });
  });

  it("refuses two tenants, and a tenant role stronger than the platform role; drops tenant roles the platform role covers", () => {
    expect(decideRole(["onceboard-tenant-acme-viewer", "onceboard-tenant-globex-viewer"], null)).toEqual({
      kind: "two-scopes",
      scopes: ["acme", "globex"],
    });
    expect(decideRole(["onceboard-platform-viewer", "onceboard-tenant-acme-admin"], null)).toEqual({
      kind: "two-scopes",
      scopes: ["platform", "acme"],
    });
    expect(decideRole(["onceboard-platform-admin", "onceboard-tenant-acme-operator"], null)).toEqual({
      kind: "granted",
      grant: { role: "admin", tenantId: null },
    });
  });

  it("with a mapping file, maps only the groups it names", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "oidc-roles-")), "roles.json");
    fs.writeFileSync(
      file,
      JSON.stringify({ "sre-oncall": { role: "operator", platform: true }, "acme-support": { role: "viewer", tenant: "acme" } }),
    );
    const mapping = loadRoleMapping(file);
    expect(decideRole(["sre-oncall"], mapping)).toEqual({ kind: "granted", grant: { role: "operator", tenantId: null } });
    expect(decideRole(["acme-support"], mapping)).toEqual({ kind: "granted", grant: { role: "viewer", tenantId: "acme" } });
    // The naming convention is off once a file is given.
    expect(decideRole(["onceboard-platform-admin"], mapping).kind).toBe("no-role");
    // Names of Object.prototype are no groups.
    expect(decideRole(["constructor", "__proto__"], mapping).kind).toBe("no-role");
  });

  it("refuses a mapping file that is not JSON, or names an unknown role, or both tenant and platform", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oidc-roles-"));
    const write = (name: string, text: string) => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    expect(() => loadRoleMapping(write("a.json", "{"))).toThrow(/OIDC_ROLE_MAPPING_FILE cannot be read as JSON/);
    expect(() => loadRoleMapping(write("b.json", '{"g":{"role":"root","platform":true}}'))).toThrow(ConfigError);
    expect(() => loadRoleMapping(write("c.json", '{"g":{"role":"viewer","platform":true,"tenant":"acme"}}'))).toThrow(
      /OIDC_ROLE_MAPPING_FILE/,
    );
    expect(() => loadRoleMapping(path.join(dir, "missing.json"))).toThrow(/OIDC_ROLE_MAPPING_FILE/);
  });

  it("reads the claim as a list of strings or one string", () => {
    expect(groupsOfClaim(["a", 1, "b"])).toEqual(["a", "b"]);
    expect(groupsOfClaim("a")).toEqual(["a"]);
    expect(groupsOfClaim(undefined)).toEqual([]);
    expect(groupsOfClaim({ a: 1 })).toEqual([]);
  });
});

describe("OIDC configuration", () => {
  const complete = {
    OIDC_ISSUER: "https://idp.example.com",
    OIDC_CLIENT_ID: "onceboard",
    OIDC_CLIENT_SECRET: "secret",
    PUBLIC_URL: "https://onceboard.example.com",
  };
  it("is all or nothing, and needs PUBLIC_URL", () => {
    expect(loadConfig(complete).OIDC_GROUPS_CLAIM).toBe("groups");
    expect(loadConfig({}).OIDC_ISSUER).toBeUndefined();
    expect(() => loadConfig({ ...complete, OIDC_CLIENT_SECRET: "" })).toThrow(/OIDC_CLIENT_SECRET must be set with/);
    expect(() => loadConfig({ ...complete, PUBLIC_URL: undefined })).toThrow(/PUBLIC_URL must be set for single sign-on/);
    expect(() => loadConfig({ ...complete, OIDC_ISSUER: "ftp://idp" })).toThrow(/OIDC_ISSUER/);
    expect(() => loadConfig({ ...complete, OIDC_SCOPES: "profile email" })).toThrow(/OIDC_SCOPES must include openid/);
  });
});
