"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function StatesError(props: RouteErrorProps) {
  return <RouteError {...props} page="States" />;
}
