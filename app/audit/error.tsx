"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function AuditError(props: RouteErrorProps) {
  return <RouteError {...props} page="Audit log" />;
}
