"use client";

import { RouteError, type RouteErrorProps } from "@/components/ui/route-error";

export default function ErrorPage(props: RouteErrorProps) {
  return <RouteError {...props} />;
}
