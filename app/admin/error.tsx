"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function AdminError(props: RouteErrorProps) {
  return <RouteError {...props} page="Tokens & sessions" />;
}
