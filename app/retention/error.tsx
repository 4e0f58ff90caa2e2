"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function RetentionError(props: RouteErrorProps) {
  return <RouteError {...props} page="Retention" />;
}
