"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function KeysError(props: RouteErrorProps) {
  return <RouteError {...props} page="Keys" />;
}
