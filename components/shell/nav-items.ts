/** The console's pages. Later issues add Delivery gaps, Keys and Retention here, with their pages. */
export const NAV_ITEMS = [
  { href: "/overview", label: "Overview", icon: "overview" },
  { href: "/keys", label: "Keys", icon: "keys" },
  { href: "/gaps", label: "Delivery gaps", icon: "gaps" },
  { href: "/violations", label: "Violations", icon: "violations" },
  { href: "/reconciliation", label: "Reconciliation", icon: "reconciliation" },
  { href: "/retention", label: "Retention", icon: "retention" },
] as const;

export type NavIcon = (typeof NAV_ITEMS)[number]["icon"];
