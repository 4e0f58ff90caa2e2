/** A delivery's field, and the delivery_timeline chunk column that holds it. */
const CHUNK_COLUMNS = {
  tenant_id: "tenants",
  job_type: "job_types",
  delivered_at: "delivered_at",
  answer: "answers",
  message_id: "message_ids",
  delivery_attempt: "delivery_attempts",
  effect_attempt: "effect_attempts",
  claim_ms: "claim_ms",
} as const;

/**
 * The SELECT list that reads one delivery out of a timeline chunk `c`, for the key at position
 * `k.n` of `unnest(c.keys) WITH ORDINALITY AS k(key, n)`. A column of one element holds the value
 * every delivery of its chunk shares (the library's migration 0015 writes it so), otherwise the
 * n-th element is the n-th key's: every read of the chunks must honour both, so it is written once.
 */
export function chunkDeliveryColumns(fields: readonly (keyof typeof CHUNK_COLUMNS)[]): string {
  return fields
    .map((field) => {
      const column = `c.${CHUNK_COLUMNS[field]}`;
      return `CASE WHEN cardinality(${column}) = 1 THEN ${column}[1] ELSE ${column}[k.n] END AS ${field}`;
    })
    .join(",\n                 ");
}
