"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function ReconciliationError(props: RouteErrorProps) {
  return <RouteError {...props} page="Reconciliation" />;
}
