/** The console's pages, in the sidebar's order; the server tier (test/server) checks each for cross-tenant leaks. */
export const NAV_ITEMS = [
  { href: "/overview", label: "Overview", icon: "overview" },
  { href: "/keys", label: "Keys", icon: "keys" },
  { href: "/gaps", label: "Delivery gaps", icon: "gaps" },
  { href: "/violations", label: "Violations", icon: "violations" },
  { href: "/reconciliation", label: "Reconciliation", icon: "reconciliation" },
  { href: "/retention", label: "Retention", icon: "retention" },
] as const;

export type NavIcon = (typeof NAV_ITEMS)[number]["icon"];
