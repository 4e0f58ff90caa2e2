import { CitusSetupError, EffectsDatabaseError, EffectsError, IsolationLevelError, PartitionMissingError } from "./errors";
import { isNoPartitionError } from "./pg-errors";
import { sqlStateOf } from "./retryable";

/** Turns a failure of the library's own statement into a typed error (handler errors never come here). */
export function mapDbError(error: unknown): Error {
  if (error instanceof EffectsError) return error;
  const state = sqlStateOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (state === "OB001") {
    const detail = (error as { detail?: unknown }).detail;
    const level =
      typeof detail === "string" && detail ? detail : (/inside a (\w+(?: \w+)?) transaction/.exec(message)?.[1] ?? "unknown");
    return new IsolationLevelError(level, { cause: error });
  }
  if (state === "OB002") return new CitusSetupError(message, { cause: error });
  if (isNoPartitionError(error)) {
    return new PartitionMissingError(
      `no effects partition covers now(): premake partitions (ensureEffectPartitions / the retention manager). ${message}`,
      { cause: error },
    );
  }
  return new EffectsDatabaseError(`effects statement failed: ${message}`, { cause: error });
}
