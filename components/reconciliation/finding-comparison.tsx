import type { ReactNode } from "react";
import type { FindingOurs, FindingTheirs } from "@/lib/features/reconciliation/contract";
import { formatUtc } from "@/lib/format";

type Field = "object" | "amount" | "currency" | "status" | "created";

const FIELD_LABELS: Record<Field, string> = {
  object: "Object",
  amount: "Amount",
  currency: "Currency",
  status: "Status",
  created: "Created",
};

/** A value the two sides are compared on, as each side holds it (null: that side holds none). */
type Comparable = string | number | null;

function oursOf(ours: FindingOurs | null, field: Field): Comparable {
  if (!ours) return null;
  if (field === "object") return ours.recorded.objectId;
  if (field === "created") return ours.createdAt;
  return ours.recorded[field];
}

function theirsOf(object: FindingTheirs, field: Field): Comparable {
  if (field === "object") return object.id;
  return object[field];
}

/** Whether two values disagree the way the reconciler compares them (a currency in any case). */
function differs(field: Field, a: Comparable, b: Comparable): boolean {
  if (field === "created" || a === null || b === null) return false;
  if (field === "currency") return String(a).toLowerCase() !== String(b).toLowerCase();
  return String(a) !== String(b);
}

/** A value whole: an amount is every digit of it (the digits a drift is about), an id every character. */
function Value({ field, value }: { field: Field; value: Comparable }): ReactNode {
  if (value === null) return <span className="muted">—</span>;
  if (field === "created") return formatUtc(String(value));
  if (field === "amount") return <span className="whole-number">{String(value)}</span>;
  if (field === "object") return <code>{value}</code>;
  return String(value);
}

/** An object's id, linked to the provider's own page for it when the providers file gives one. */
function ObjectLink({ object, provider }: { object: FindingTheirs; provider: string }) {
  if (!object.url) return <code>{object.id}</code>;
  return (
    <a href={object.url} target="_blank" rel="noopener noreferrer" data-testid="provider-object-link">
      <code>{object.id}</code>
      <span className="sr-only"> at {provider} (opens a new tab)</span>
      <span aria-hidden="true"> ↗</span>
    </a>
  );
}

/**
 * Onceboard's record and the provider's objects side by side, one row per field the reconciler
 * compares: what the step's outcome recorded against what the provider holds, a disagreement
 * marked in words as well as colour. Numbers and ids are shown whole: cells wrap, never cut.
 */
export function FindingComparison({
  ours,
  theirs,
  provider,
}: {
  ours: FindingOurs | null;
  theirs: FindingTheirs[];
  provider: string;
}) {
  const fields: Field[] = ["object", "amount", "currency", "status", "created"];
  const recordedId = ours?.recorded.objectId ?? null;
  return (
    <div className="finding-comparison-wrap">
      <table className="finding-comparison" data-testid="finding-comparison">
        <caption className="sr-only">Onceboard's record beside {provider}'s objects</caption>
        <colgroup>
          <col className="finding-comparison-label" />
          <col />
          {theirs.length === 0 ? <col /> : theirs.map((t) => <col key={t.id} />)}
        </colgroup>
        <thead>
          <tr>
            <td />
            <th scope="col" data-side="ours">
              Onceboard
            </th>
            {theirs.length === 0 ? (
              <th scope="col" data-side="theirs">
                {provider}
              </th>
            ) : (
              theirs.map((t, i) => (
                <th key={t.id} scope="col" data-side="theirs">
                  {provider}
                  {theirs.length > 1 ? ` ${i + 1} of ${theirs.length}` : ""}
                  {theirs.length > 1 && recordedId !== null ? (
                    <span className="finding-comparison-note">
                      {t.id === recordedId ? "the one Onceboard recorded" : "not recorded by Onceboard"}
                    </span>
                  ) : null}
                </th>
              ))
            )}
          </tr>
        </thead>
        <tbody>
          {fields.map((field) => {
            const mine = oursOf(ours, field);
            return (
              <tr key={field} data-field={field}>
                <th scope="row">{FIELD_LABELS[field]}</th>
                <td data-side="ours" data-testid={`ours-${field}`}>
                  <Value field={field} value={mine} />
                </td>
                {theirs.length === 0 ? (
                  <td data-side="theirs" className="muted">
                    {field === "object" ? `no object at ${provider} carries this key` : "—"}
                  </td>
                ) : (
                  theirs.map((t) => {
                    const value = theirsOf(t, field);
                    const off = differs(field, mine, value);
                    return (
                      <td key={t.id} data-side="theirs" data-testid={`theirs-${field}`} data-differs={off || undefined}>
                        {field === "object" ? (
                          <ObjectLink object={t} provider={provider} />
                        ) : (
                          <Value field={field} value={value} />
                        )}
                        {off ? <span className="finding-differs"> differs</span> : null}
                      </td>
                    );
                  })
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
      {ours === null ? (
        <p className="muted">No effect: Onceboard never claimed this key (a path that called {provider} without a claim).</p>
      ) : null}
    </div>
  );
}
