"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { postJson } from "@/components/api/fetch-json";
import { ROLES } from "@/lib/auth/auth-types";
import { ADMIN_QUERY_ROOT } from "@/lib/features/tokens-and-sessions/admin-types";
import type { CreatedTokenResponse } from "@/lib/features/tokens-and-sessions/contract";
import { CreatedSecret } from "./created-secret";

const EXPIRY_CHOICES = [
  { label: "never", days: 0 },
  { label: "7 days", days: 7 },
  { label: "30 days", days: 30 },
  { label: "90 days", days: 90 },
  { label: "1 year", days: 365 },
] as const;

/**
 * Creates a machine token. A tenant admin's is bound to its own tenant (the server decides, the
 * form does not offer a choice); a platform admin names a tenant, or leaves it empty for a platform token.
 */
export function CreateTokenForm({ platform, tenant }: { platform: boolean; tenant: string | null }) {
  const client = useQueryClient();
  const [created, setCreated] = useState<CreatedTokenResponse | null>(null);
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) => postJson<CreatedTokenResponse>("/api/v1/tokens", body),
    onSuccess: (data) => setCreated(data),
    onSettled: () => client.invalidateQueries({ queryKey: [ADMIN_QUERY_ROOT] }),
  });
  if (created)
    return (
      <div className="panel-section">
        <CreatedSecret created={created} onDismiss={() => setCreated(null)} />
      </div>
    );
  return (
    <form
      className="filter-form panel-section"
      data-testid="create-token"
      onSubmit={(event) => {
        event.preventDefault();
        const form = new FormData(event.currentTarget);
        const days = Number(form.get("expires") ?? 0);
        const tenantField = String(form.get("tenant") ?? "").trim();
        create.mutate({
          name: String(form.get("name") ?? "").trim(),
          role: String(form.get("role") ?? "viewer"),
          ...(platform ? { tenant: tenantField === "" ? null : tenantField } : {}),
          ...(days > 0 ? { expiresAt: new Date(Date.now() + days * 86_400_000).toISOString() } : {}),
        });
      }}
    >
      <label>
        Name <input name="name" required maxLength={100} size={18} placeholder="e.g. billing-worker" />
      </label>
      <label>
        Role{" "}
        <select name="role" defaultValue="viewer">
          {ROLES.map((role) => (
            <option key={role} value={role}>
              {role}
            </option>
          ))}
        </select>
      </label>
      {platform ? (
        <label>
          Tenant <input name="tenant" size={12} placeholder="platform" defaultValue={tenant ?? ""} />
        </label>
      ) : (
        <span className="muted">Tenant {tenant}</span>
      )}
      <label>
        Expires{" "}
        <select name="expires" defaultValue="90">
          {EXPIRY_CHOICES.map((choice) => (
            <option key={choice.label} value={choice.days}>
              {choice.label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="button" disabled={create.isPending}>
        {create.isPending ? "Creating…" : "Create token"}
      </button>
      {create.isError ? (
        <p role="alert" className="login-error">
          {create.error.message}
        </p>
      ) : null}
    </form>
  );
}
