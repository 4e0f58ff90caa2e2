/**
 * The comparison of one run, as one statement: the window's effects (of the provider's job types
 * and steps) against the objects the run staged, findings upserted by identity, matched pairs
 * counted. PostgreSQL does the join, so the reconciler's memory does not grow with the window.
 *
 * Parameters: $1 run id, $2 provider, $3 window from, $4 window to, $5 job types, $6 key
 * patterns (LIKE), $7 grace seconds, $8 key required, $9 compare fields, $10 the objects' noun.
 *
 * A key has at most one finding at a time (identity provider:key:tenant:key): a pending absence
 * that becomes missing, or a match that becomes a duplicate, updates the same row. An object
 * without a key is its own finding (provider:object:id).
 */
export const COMPARE_SQL = `
WITH eff AS (
  SELECT e.tenant_id, e.key, e.job_type, e.status, e.attempt, e.outcome, e.created_at
    FROM effects e
   WHERE e.created_at >= $3 AND e.created_at < $4
     AND e.job_type = ANY($5::text[]) AND e.key LIKE ANY($6::text[])
),
objs AS (
  SELECT s.tenant_id, s.object_key, count(*) AS n,
         array_agg(s.object_id ORDER BY s.created, s.object_id) AS ids,
         jsonb_agg(jsonb_build_object('id', s.object_id, 'amount', s.amount, 'currency', s.currency, 'status', s.status,
                                      'created', s.created, 'metadata', s.metadata) ORDER BY s.created, s.object_id) AS theirs
    FROM reconciliation_staged_objects s
   WHERE s.run_id = $1 AND s.object_key IS NOT NULL AND s.tenant_id IS NOT NULL
   GROUP BY s.tenant_id, s.object_key
),
paired AS (
  SELECT eff.*, coalesce(objs.n, 0) AS n, coalesce(objs.ids, '{}'::text[]) AS ids, coalesce(objs.theirs, '[]'::jsonb) AS theirs,
         concat_ws('; ',
           CASE WHEN 'amount' = ANY($9::text[]) AND eff.outcome ? 'amount'
                 AND (eff.outcome->>'amount') IS DISTINCT FROM (objs.theirs->0->>'amount')
                THEN format('amount %s here, %s at the provider', eff.outcome->>'amount', objs.theirs->0->>'amount') END,
           CASE WHEN 'currency' = ANY($9::text[]) AND eff.outcome ? 'currency'
                 AND lower(eff.outcome->>'currency') IS DISTINCT FROM lower(objs.theirs->0->>'currency')
                THEN format('currency %s here, %s at the provider', eff.outcome->>'currency', objs.theirs->0->>'currency') END,
           CASE WHEN 'status' = ANY($9::text[]) AND eff.outcome ? 'status'
                 AND (eff.outcome->>'status') IS DISTINCT FROM (objs.theirs->0->>'status')
                THEN format('status %s here, %s at the provider', eff.outcome->>'status', objs.theirs->0->>'status') END,
           CASE WHEN eff.outcome ? 'provider_object_id' AND (eff.outcome->>'provider_object_id') IS DISTINCT FROM objs.ids[1]
                THEN format('the outcome recorded %s, the provider holds %s', eff.outcome->>'provider_object_id', objs.ids[1]) END,
           CASE WHEN eff.status = 'failed' THEN format('the effect failed here, yet the provider holds %s', objs.ids[1]) END
         ) AS drift
    FROM eff LEFT JOIN objs ON objs.tenant_id = eff.tenant_id AND objs.object_key = eff.key
),
classified AS (
  SELECT p.*,
         CASE
           WHEN p.n >= 2 THEN 'duplicated_at_provider'
           WHEN p.n = 0 AND p.status = 'failed' THEN NULL
           WHEN p.n = 0 AND (p.status = 'in_progress' OR p.created_at > now() - make_interval(secs => $7)) THEN 'pending'
           WHEN p.n = 0 THEN 'missing_at_provider'
           WHEN p.drift <> '' THEN 'drift'
         END AS kind
    FROM paired p
),
-- An object in the window whose key's effect is older than the window, and whose outcome recorded
-- another object: the provider charged again after it forgot the idempotency key (Stripe: 24 h).
late AS (
  SELECT s.tenant_id, s.object_key, e.job_type, e.status, e.attempt, e.outcome, e.created_at,
         array_agg(s.object_id ORDER BY s.created, s.object_id) AS ids,
         jsonb_agg(jsonb_build_object('id', s.object_id, 'amount', s.amount, 'currency', s.currency, 'status', s.status,
                                      'created', s.created, 'metadata', s.metadata) ORDER BY s.created, s.object_id) AS theirs
    FROM reconciliation_staged_objects s
    JOIN effects e ON e.tenant_id = s.tenant_id AND e.key = s.object_key AND e.created_at < $3
   WHERE s.run_id = $1 AND s.created >= $3 AND s.created < $4
     AND e.outcome ? 'provider_object_id' AND (e.outcome->>'provider_object_id') <> s.object_id
   GROUP BY s.tenant_id, s.object_key, e.job_type, e.status, e.attempt, e.outcome, e.created_at
),
unknown AS (
  SELECT s.tenant_id, s.object_key,
         array_agg(s.object_id ORDER BY s.created, s.object_id) AS ids,
         jsonb_agg(jsonb_build_object('id', s.object_id, 'amount', s.amount, 'currency', s.currency, 'status', s.status,
                                      'created', s.created, 'metadata', s.metadata) ORDER BY s.created, s.object_id) AS theirs
    FROM reconciliation_staged_objects s
   WHERE s.run_id = $1 AND s.created >= $3 AND s.created < $4
     AND (s.object_key IS NOT NULL OR $8::boolean)
     AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.tenant_id = s.tenant_id AND e.key = s.object_key)
   GROUP BY s.tenant_id, s.object_key, CASE WHEN s.object_key IS NULL THEN s.object_id END
),
found AS (
  SELECT format('%s:key:%s:%s', $2::text, c.tenant_id, c.key) AS identity, c.kind, c.tenant_id, c.job_type, c.key AS effect_key, c.ids,
         jsonb_build_object('key', c.key, 'status', c.status, 'attempt', c.attempt, 'outcome', c.outcome, 'created_at', c.created_at,
                            'provider_key', 'ob_' || translate(encode(sha256(convert_to(c.tenant_id, 'UTF8') || '\\x01'::bytea || convert_to(c.key, 'UTF8')), 'base64'), E'+/=\\n', '-_')) AS ours,
         c.theirs,
         CASE c.kind
           WHEN 'duplicated_at_provider' THEN format('%s %ss carry %s', c.n, $10::text, c.key)
           -- An abandoned at-most-once step the provider never saw is the send the trade gave up.
           WHEN 'missing_at_provider' THEN
             CASE WHEN c.status = 'abandoned'
                  THEN format('%s was claimed and abandoned here, and no %s carries it: never sent', c.key, $10::text)
                  ELSE format('%s is %s here, but no %s carries it', c.key, c.status, $10::text) END
           WHEN 'pending' THEN format('%s: no %s yet, within the %s s grace period', c.key, $10::text, $7)
           ELSE format('%s: %s', c.key, c.drift)
         END AS detail
    FROM classified c WHERE c.kind IS NOT NULL
  UNION ALL
  SELECT format('%s:key:%s:%s', $2::text, l.tenant_id, l.object_key), 'duplicated_at_provider', l.tenant_id, l.job_type, l.object_key,
         ((l.outcome->>'provider_object_id') || l.ids),
         jsonb_build_object('key', l.object_key, 'status', l.status, 'attempt', l.attempt, 'outcome', l.outcome, 'created_at', l.created_at,
                            'provider_key', 'ob_' || translate(encode(sha256(convert_to(l.tenant_id, 'UTF8') || '\\x01'::bytea || convert_to(l.object_key, 'UTF8')), 'base64'), E'+/=\\n', '-_')),
         l.theirs,
         format('%s carries %s, whose outcome recorded %s: a second %s after the key was forgotten',
                array_to_string(l.ids, ', '), l.object_key, l.outcome->>'provider_object_id', $10::text)
    FROM late l
  UNION ALL
  SELECT CASE WHEN u.object_key IS NULL THEN format('%s:object:%s', $2::text, u.ids[1])
              ELSE format('%s:key:%s:%s', $2::text, u.tenant_id, u.object_key) END,
         'unknown_to_onceboard', u.tenant_id, NULL, u.object_key, u.ids, NULL, u.theirs,
         CASE WHEN u.object_key IS NULL THEN format('%s carries no Onceboard key: a path that called the provider without a claim', u.ids[1])
              ELSE format('%s carries %s, which has no effect here', array_to_string(u.ids, ', '), u.object_key) END
    FROM unknown u
),
written AS (
  INSERT INTO reconciliation_findings AS f
         (identity, provider, kind, tenant_id, job_type, effect_key, provider_object_ids, ours, theirs, detail, first_run_id, last_run_id)
  SELECT identity, $2, kind, tenant_id, job_type, effect_key, ids, ours, theirs, detail, $1, $1 FROM found
  ON CONFLICT (identity) DO UPDATE
     SET kind = EXCLUDED.kind, provider_object_ids = EXCLUDED.provider_object_ids, ours = EXCLUDED.ours, theirs = EXCLUDED.theirs,
         detail = EXCLUDED.detail, last_run_id = EXCLUDED.last_run_id, last_seen_at = now(),
         -- A finding that changed kind is news even if an operator closed the old one.
         state = CASE WHEN f.kind <> EXCLUDED.kind THEN 'open' ELSE f.state END
  RETURNING kind
),
-- A pending absence whose object has since arrived (and matched) is over.
settled AS (
  UPDATE reconciliation_findings f
     SET state = 'resolved', state_note = 'the provider''s object arrived and matched', state_changed_by = 'reconciler',
         state_changed_at = now()
    FROM classified c
   WHERE c.kind IS NULL AND c.n = 1 AND f.identity = format('%s:key:%s:%s', $2::text, c.tenant_id, c.key)
     AND f.kind = 'pending' AND f.state = 'open'
  RETURNING f.id
)
SELECT (SELECT count(*) FROM classified WHERE kind IS NULL AND n = 1) AS matched,
       (SELECT count(*) FROM eff) AS effects_seen,
       (SELECT count(*) FROM settled) AS settled,
       coalesce((SELECT jsonb_object_agg(kind, n) FROM (SELECT kind, count(*) AS n FROM written GROUP BY kind) k), '{}'::jsonb) AS counts`;
