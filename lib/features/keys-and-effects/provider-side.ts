import { loadConfig } from "../../config";
import type { Queryable } from "../../db/types";
import { formatDuration } from "../../format";
import { providerOf, type ReconcileProvider, reconcileProviders } from "../../reconciliation/providers";
import type { FindingKind } from "../reconciliation/reconciliation-types";
import type { ProviderSide } from "./contract";
import type { EffectStatus } from "./effects-types";

// The latest completed run whose window holds the key's creation time, and the findings about the
// key that are not resolved: two index lookups ((provider, window_to desc) and (tenant_id, effect_key)).
const PROVIDER_SIDE = `
SELECT (SELECT max(completed_at) FROM reconciliation_coverage
         WHERE provider = $1 AND window_from <= $4::timestamptz AND window_to > $4::timestamptz) AS reconciled_at,
       COALESCE((SELECT json_agg(json_build_object('id', id::text, 'kind', kind, 'objects', provider_object_ids) ORDER BY id)
                   FROM reconciliation_findings
                  WHERE tenant_id = $2 AND effect_key = $3 AND provider = $1 AND state <> 'resolved'), '[]'::json) AS findings`;

interface ProviderSideRow {
  reconciled_at: Date | null;
  findings: { id: string; kind: FindingKind; objects: string[] }[];
}

/** The provider object id an external step recorded with its outcome (lib/idempotency providerOutcome). */
function recordedObjectId(outcome: unknown): string | null {
  if (outcome === null || typeof outcome !== "object") return null;
  const id = (outcome as Record<string, unknown>).provider_object_id;
  return typeof id === "string" && id !== "" ? id : null;
}

// What people call the step's object (the providers file's step noun: a refund step's is "refund"),
// else the provider's object noun in lower case.
function nounFor(provider: ReconcileProvider, key: string): string {
  const step = provider.keyPrefixes.find((prefix) => key.startsWith(prefix) && provider.stepNouns[prefix] !== undefined);
  return step === undefined ? provider.objectNoun.toLowerCase() : (provider.stepNouns[step] as string);
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

function here(status: EffectStatus, attempts: number): string {
  if (status === "completed") return attempts <= 1 ? "ran once here" : `completed here on attempt ${attempts}`;
  if (status === "abandoned") return "abandoned here";
  if (status === "failed") return "failed here";
  return "running here";
}

/**
 * The key's verdict from the provider's side: what the last run covering the key saw (nothing to
 * report: one object, the one the outcome recorded) and what the findings about the key say
 * (two objects for one key is the double charge, in red). Null when no provider holds the key's
 * job type or no run has looked at it yet.
 */
export async function getProviderSide(
  db: Queryable,
  effect: {
    tenant: string;
    key: string;
    jobType: string;
    status: EffectStatus;
    attempts: number;
    createdAt: Date;
    outcome: unknown;
  },
  options: { now?: Date; providers?: ReconcileProvider[] } = {},
): Promise<ProviderSide | null> {
  const provider = providerOf(options.providers ?? reconcileProviders(loadConfig()), effect);
  if (!provider) return null;
  const { rows } = await db.query<ProviderSideRow>(PROVIDER_SIDE, [provider.name, effect.tenant, effect.key, effect.createdAt]);
  const row = rows[0];
  if (!row || (row.reconciled_at === null && row.findings.length === 0)) return null;
  const now = options.now ?? new Date();
  const noun = nounFor(provider, effect.key);
  const recorded = recordedObjectId(effect.outcome);
  const findingIds = row.findings.map((f) => f.id);
  const objectsOf = (kind: FindingKind) => row.findings.find((f) => f.kind === kind)?.objects;
  const reconciled =
    row.reconciled_at === null
      ? null
      : `reconciled ${formatDuration(Math.max(0, (now.getTime() - row.reconciled_at.getTime()) / 1000), { whole: true })} ago`;
  const side = (tone: ProviderSide["tone"], middle: string, objectIds: string[]): ProviderSide => ({
    provider: provider.name,
    label: provider.label,
    text: [here(effect.status, effect.attempts), middle, reconciled].filter(Boolean).join(" · "),
    tone,
    objectIds,
    reconciledAt: row.reconciled_at ? row.reconciled_at.toISOString() : null,
    findingIds,
  });
  const at = `at ${provider.label}`;
  const duplicated = objectsOf("duplicated_at_provider");
  if (duplicated) return side("danger", `${plural(duplicated.length, noun)} ${at}`, duplicated);
  if (objectsOf("missing_at_provider")) {
    // An abandoned at-most-once step with nothing at the provider: the email was never sent.
    return side("danger", effect.status === "abandoned" ? `never sent: no ${noun} ${at}` : `no ${noun} ${at}`, []);
  }
  const drift = objectsOf("drift");
  if (drift) return side("warning", `1 ${noun} ${at} (${drift.join(", ")}) differs from the recorded outcome`, drift);
  const unknown = objectsOf("unknown_to_onceboard");
  if (unknown) return side("warning", `${plural(unknown.length, noun)} ${at} this key's effect does not account for`, unknown);
  if (objectsOf("pending")) return side("ok", `${at}: not yet reconciled (inside the grace period)`, []);
  return side("ok", `1 ${noun} ${at}${recorded ? ` (${recorded})` : ""}`, recorded ? [recorded] : []);
}
