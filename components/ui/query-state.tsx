"use client";

import type { UseQueryResult } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { describeApiError } from "./describe-api-error";
import { ErrorState } from "./error-state";
import { StaleBanner } from "./stale-banner";

/** What QueryStates reads of a query: a useQuery's result, or a useInfiniteQuery's (its data is the pages). */
type QueryLike<T> = Pick<UseQueryResult<T>, "data" | "error" | "isPending" | "isError" | "isFetching" | "dataUpdatedAt"> & {
  refetch: () => Promise<unknown>;
};

/**
 * One place for a query's loading, error and stale states: the skeleton while nothing is known,
 * the error panel when nothing was ever loaded, the stale banner above kept data, else the data.
 */
export function QueryStates<T>({
  query,
  what,
  skeleton,
  children,
}: {
  query: QueryLike<T>;
  what: string;
  skeleton: ReactNode;
  children: (data: T) => ReactNode;
}) {
  const { data, error, isPending, isError, isFetching, dataUpdatedAt, refetch } = query;
  if (isPending && !data) return <>{skeleton}</>;
  if (isError && data === undefined)
    return <ErrorState {...describeApiError(error, what)} onRetry={() => void refetch()} retrying={isFetching} />;
  if (data === undefined) return <>{skeleton}</>;
  return (
    <>
      {isError ? <StaleBanner error={error} updatedAt={dataUpdatedAt} onRetry={() => void refetch()} what={what} /> : null}
      {children(data)}
    </>
  );
}
