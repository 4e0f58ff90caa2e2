"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function ViolationsError(props: RouteErrorProps) {
  return <RouteError {...props} page="Violations" />;
}
