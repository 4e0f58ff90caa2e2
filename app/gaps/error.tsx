"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function GapsError(props: RouteErrorProps) {
  return <RouteError {...props} page="Delivery gaps" />;
}
