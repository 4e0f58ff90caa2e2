import { InvalidEffectKeyError } from "./errors";

/**
 * What an external step writes into the provider's object so a reconciliation can join the two
 * without guessing: the effect key and the tenant, under names Stripe accepts (metadata keys at
 * most 40 characters, values at most 500). Effect keys and tenants are at most 255 code points,
 * which is at most 1020 UTF-16 units: a value past Stripe's 500 is refused here, at the call,
 * rather than by the provider after the claim.
 */
export const PROVIDER_METADATA_KEY = "onceboard_key";
export const PROVIDER_METADATA_TENANT = "onceboard_tenant";
const PROVIDER_METADATA_VALUE_MAX = 500;

export interface OnceboardMetadata {
  onceboard_key: string;
  onceboard_tenant: string;
}

export function onceboardMetadata(claim: { tenant: string; key: string }): OnceboardMetadata {
  for (const [field, value] of [
    ["key", claim.key],
    ["tenant", claim.tenant],
  ] as const) {
    if (value.length > PROVIDER_METADATA_VALUE_MAX) {
      throw new InvalidEffectKeyError(
        `effect ${field} is ${value.length} characters; a provider's metadata value holds at most ${PROVIDER_METADATA_VALUE_MAX}`,
        { field },
      );
    }
  }
  return { [PROVIDER_METADATA_KEY]: claim.key, [PROVIDER_METADATA_TENANT]: claim.tenant } as OnceboardMetadata;
}

/**
 * The outcome an external step returns so that the reconciler can compare it with the provider's
 * object: the provider's id and what was asked for. The reconciler reads these fields from the
 * effect's outcome (`provider_object_id`, `amount`, `currency`, `status`); other fields pass through.
 */
export interface ProviderOutcome {
  provider_object_id: string;
  amount?: number;
  currency?: string;
  status?: string;
}

export function providerOutcome<T extends object>(
  object: { id: string; amount?: number; currency?: string; status?: string },
  extra?: T,
): ProviderOutcome & T {
  const out: ProviderOutcome = { provider_object_id: object.id };
  if (object.amount !== undefined) out.amount = object.amount;
  if (object.currency !== undefined) out.currency = object.currency;
  if (object.status !== undefined) out.status = object.status;
  return { ...(extra as T), ...out };
}
