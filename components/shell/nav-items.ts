import type { Role } from "@/lib/auth/auth-types";

/**
 * The console's pages, in the sidebar's order, with the least role the sidebar shows each to (a
 * page still answers anyone signed in: below its role it says what it needs, and shows no data).
 * The server tier (test/server) checks each for cross-tenant leaks.
 */
export const NAV_ITEMS: readonly { href: string; label: string; icon: NavIcon; minRole: Role }[] = [
  { href: "/overview", label: "Overview", icon: "overview", minRole: "viewer" },
  { href: "/keys", label: "Keys", icon: "keys", minRole: "viewer" },
  { href: "/states", label: "States", icon: "states", minRole: "viewer" },
  { href: "/gaps", label: "Delivery gaps", icon: "gaps", minRole: "viewer" },
  { href: "/violations", label: "Violations", icon: "violations", minRole: "viewer" },
  { href: "/reconciliation", label: "Reconciliation", icon: "reconciliation", minRole: "viewer" },
  { href: "/retention", label: "Retention", icon: "retention", minRole: "viewer" },
  { href: "/audit", label: "Audit log", icon: "audit", minRole: "admin" },
  { href: "/admin", label: "Tokens & sessions", icon: "admin", minRole: "admin" },
];

export type NavIcon = "overview" | "keys" | "states" | "gaps" | "violations" | "reconciliation" | "retention" | "audit" | "admin";
