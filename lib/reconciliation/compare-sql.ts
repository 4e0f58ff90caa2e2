import { statusSql } from "../idempotency/states";

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
 *
 * Shape, for a window of a million pairs: the staged rows are read twice, once grouped by key (a
 * hash aggregate of narrow columns) and joined to the effects by hash in a full join, so a key
 * that only the objects carry falls out of the same pass; once more to fetch, for the few keys a
 * finding shows, their objects (a hash join against those keys). Only those objects are built
 * into JSON, and only keys no window effect carries are looked up among the other days' effects
 * (unknown, or charged again after the provider forgot the key). The staging table has no index
 * (staging stays an append), so an object the provider listed twice is told apart here: min and max
 * of a key's object ids say whether one object or several carry it, and the objects a finding
 * shows are taken DISTINCT by id.
 */
export const COMPARE_SQL = `
WITH eff AS (
  SELECT e.tenant_id, e.key, e.job_type, e.status, e.attempt, e.outcome, e.created_at
    FROM effects e
   WHERE e.created_at >= $3 AND e.created_at < $4
     AND e.job_type = ANY($5::text[]) AND e.key LIKE ANY($6::text[])
),
-- The run's keyed objects, one row per key; for a key one object carries, that object's fields.
objs AS (
  SELECT s.tenant_id, s.object_key, min(s.object_id) AS object_id, min(s.object_id) <> max(s.object_id) AS several,
         min(s.amount) AS amount, min(s.currency) AS currency, min(s.status) AS status
    FROM reconciliation_staged_objects s
   WHERE s.run_id = $1 AND s.object_key IS NOT NULL AND s.tenant_id IS NOT NULL
   GROUP BY s.tenant_id, s.object_key
),
paired AS (
  SELECT coalesce(eff.tenant_id, objs.tenant_id) AS tenant_id, coalesce(eff.key, objs.object_key) AS key,
         eff.key IS NOT NULL AS ours, objs.object_key IS NOT NULL AS listed, coalesce(objs.several, false) AS several,
         eff.job_type, eff.status, eff.attempt, eff.outcome, eff.created_at,
         CASE WHEN eff.key IS NOT NULL AND objs.object_key IS NOT NULL AND NOT objs.several THEN concat_ws('; ',
           CASE WHEN 'amount' = ANY($9::text[]) AND eff.outcome ? 'amount'
                 AND (eff.outcome->>'amount') IS DISTINCT FROM objs.amount::text
                THEN format('amount %s here, %s at the provider', eff.outcome->>'amount', objs.amount) END,
           CASE WHEN 'currency' = ANY($9::text[]) AND eff.outcome ? 'currency'
                 AND lower(eff.outcome->>'currency') IS DISTINCT FROM lower(objs.currency)
                THEN format('currency %s here, %s at the provider', eff.outcome->>'currency', objs.currency) END,
           CASE WHEN 'status' = ANY($9::text[]) AND eff.outcome ? 'status'
                 AND (eff.outcome->>'status') IS DISTINCT FROM objs.status
                THEN format('status %s here, %s at the provider', eff.outcome->>'status', objs.status) END,
           CASE WHEN eff.outcome ? 'provider_object_id' AND (eff.outcome->>'provider_object_id') IS DISTINCT FROM objs.object_id
                THEN format('the outcome recorded %s, the provider holds %s', eff.outcome->>'provider_object_id', objs.object_id) END,
           CASE WHEN eff.status = ${statusSql("failed")} THEN format('the effect failed here, yet the provider holds %s', objs.object_id) END
         ) END AS drift
    FROM eff FULL JOIN objs ON objs.tenant_id = eff.tenant_id AND objs.object_key = eff.key
),
-- A key only objects carry has no kind here: it is late or unknown, below.
classified AS (
  SELECT p.*,
         CASE
           WHEN NOT p.ours THEN NULL
           WHEN p.several THEN 'duplicated_at_provider'
           WHEN NOT p.listed AND p.status = ${statusSql("failed")} THEN NULL
           WHEN NOT p.listed AND (p.status = ${statusSql("in_progress")} OR p.created_at > now() - make_interval(secs => $7)) THEN 'pending'
           WHEN NOT p.listed THEN 'missing_at_provider'
           WHEN p.drift <> '' THEN 'drift'
         END AS kind
    FROM paired p
),
-- The keys whose objects a finding shows, or that more than one object carries: few.
shown AS MATERIALIZED (
  SELECT tenant_id, key, NOT ours AS orphan, several FROM classified WHERE (listed AND kind IS NOT NULL) OR NOT ours
),
-- Their objects, each once (a semi join, hashing the few keys), and the objects that carry no
-- key or no tenant (a partial index holds those).
shown_rows AS MATERIALIZED (
  SELECT DISTINCT ON (o.object_id) o.*
    FROM (SELECT s.object_id, s.object_key, s.tenant_id, s.amount, s.currency, s.status, s.created, s.metadata
            FROM reconciliation_staged_objects s
           WHERE s.run_id = $1 AND (s.tenant_id, s.object_key) IN (SELECT tenant_id, key FROM shown)
          UNION ALL
          SELECT s.object_id, s.object_key, s.tenant_id, s.amount, s.currency, s.status, s.created, s.metadata
            FROM reconciliation_staged_objects s
           WHERE s.run_id = $1 AND (s.object_key IS NULL OR s.tenant_id IS NULL)) o
   ORDER BY o.object_id
),
shown_objects AS (
  SELECT o.*, coalesce(k.orphan, true) AS orphan, coalesce(k.several, false) AS several
    FROM shown_rows o LEFT JOIN shown k ON k.tenant_id = o.tenant_id AND k.key = o.object_key
),
theirs_by_key AS (
  SELECT o.tenant_id, o.object_key, count(*) AS n,
         array_agg(o.object_id ORDER BY o.created, o.object_id) AS ids,
         jsonb_agg(jsonb_build_object('id', o.object_id, 'amount', o.amount, 'currency', o.currency, 'status', o.status,
                                      'created', o.created, 'metadata', o.metadata) ORDER BY o.created, o.object_id) AS theirs
    FROM shown_objects o
   WHERE NOT o.orphan
   GROUP BY o.tenant_id, o.object_key
),
-- An object in the window whose key's effect is older than the window, and whose outcome recorded
-- another object: the provider charged again after it forgot the idempotency key (Stripe: 24 h).
late AS (
  SELECT o.tenant_id, o.object_key, e.job_type, e.status, e.attempt, e.outcome, e.created_at,
         array_agg(o.object_id ORDER BY o.created, o.object_id) AS ids,
         jsonb_agg(jsonb_build_object('id', o.object_id, 'amount', o.amount, 'currency', o.currency, 'status', o.status,
                                      'created', o.created, 'metadata', o.metadata) ORDER BY o.created, o.object_id) AS theirs
    FROM shown_objects o
    JOIN effects e ON e.tenant_id = o.tenant_id AND e.key = o.object_key AND e.created_at < $3
   WHERE o.orphan AND o.created >= $3 AND o.created < $4
     AND e.outcome ? 'provider_object_id' AND (e.outcome->>'provider_object_id') <> o.object_id
   GROUP BY o.tenant_id, o.object_key, e.job_type, e.status, e.attempt, e.outcome, e.created_at
),
unknown AS (
  SELECT o.tenant_id, o.object_key,
         array_agg(o.object_id ORDER BY o.created, o.object_id) AS ids,
         jsonb_agg(jsonb_build_object('id', o.object_id, 'amount', o.amount, 'currency', o.currency, 'status', o.status,
                                      'created', o.created, 'metadata', o.metadata) ORDER BY o.created, o.object_id) AS theirs
    FROM shown_objects o
   WHERE o.orphan AND o.created >= $3 AND o.created < $4
     AND (o.object_key IS NOT NULL OR $8::boolean)
     AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.tenant_id = o.tenant_id AND e.key = o.object_key)
   GROUP BY o.tenant_id, o.object_key, CASE WHEN o.object_key IS NULL THEN o.object_id END
),
found AS (
  SELECT format('%s:key:%s:%s', $2::text, c.tenant_id, c.key) AS identity, c.kind, c.tenant_id, c.job_type, c.key AS effect_key,
         coalesce(t.ids, '{}'::text[]) AS ids,
         jsonb_build_object('key', c.key, 'status', c.status, 'attempt', c.attempt, 'outcome', c.outcome, 'created_at', c.created_at,
                            'provider_key', 'ob_' || translate(encode(sha256(convert_to(c.tenant_id, 'UTF8') || '\\x01'::bytea || convert_to(c.key, 'UTF8')), 'base64'), E'+/=\\n', '-_')) AS ours,
         coalesce(t.theirs, '[]'::jsonb) AS theirs,
         CASE c.kind
           WHEN 'duplicated_at_provider' THEN format('%s %ss carry %s', t.n, $10::text, c.key)
           -- An abandoned at-most-once step the provider never saw is the send the trade gave up.
           WHEN 'missing_at_provider' THEN
             CASE WHEN c.status = ${statusSql("abandoned")}
                  THEN format('%s was claimed and abandoned here, and no %s carries it: never sent', c.key, $10::text)
                  ELSE format('%s is %s here, but no %s carries it', c.key, c.status, $10::text) END
           WHEN 'pending' THEN format('%s: no %s yet, within the %s s grace period', c.key, $10::text, $7)
           ELSE format('%s: %s', c.key, c.drift)
         END AS detail
    FROM classified c
    LEFT JOIN theirs_by_key t ON t.tenant_id = c.tenant_id AND t.object_key = c.key
   WHERE c.kind IS NOT NULL
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
   WHERE c.ours AND c.listed AND c.kind IS NULL
     AND f.tenant_id = c.tenant_id AND f.effect_key = c.key AND f.identity = format('%s:key:%s:%s', $2::text, c.tenant_id, c.key)
     AND f.kind = 'pending' AND f.state = 'open'
  RETURNING f.id
),
tally AS (
  SELECT count(*) FILTER (WHERE ours AND listed AND kind IS NULL) AS matched,
         count(*) FILTER (WHERE ours) AS effects_seen,
         count(*) FILTER (WHERE listed AND NOT several) AS single_keys
    FROM classified
)
SELECT tally.matched, tally.effects_seen,
       -- One object per key one object carries, and each object of the rest (counted DISTINCT by id above).
       tally.single_keys + (SELECT count(*) FROM shown_objects o WHERE o.several OR o.object_key IS NULL OR o.tenant_id IS NULL) AS objects_seen,
       (SELECT count(*) FROM settled) AS settled,
       coalesce((SELECT jsonb_object_agg(kind, n) FROM (SELECT kind, count(*) AS n FROM written GROUP BY kind) k), '{}'::jsonb) AS counts
  FROM tally`;
