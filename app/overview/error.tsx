"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function OverviewError(props: RouteErrorProps) {
  return <RouteError {...props} page="Overview" />;
}
