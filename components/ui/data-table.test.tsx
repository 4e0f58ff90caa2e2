import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { type Column, DataTable } from "./data-table";
import { camelCaseParts, identifierParts } from "./word-breaks";

interface Row {
  key: string;
  tenant: string;
  count: number;
  error: string;
}

const COLUMNS: Column<Row>[] = [
  { id: "key", label: "Key", kind: "key", priority: 1, cell: (r) => <code>{r.key}</code> },
  { id: "tenant", label: "Tenant", kind: "id", cell: (r) => r.tenant },
  { id: "count", label: "Count", kind: "number", cell: (r) => r.count },
  { id: "error", label: "Error", kind: "truncate", priority: 3, cell: (r) => r.error, whole: (r) => r.error },
];

const ROW: Row = { key: "capture:ord-1", tenant: "northwind-emea", count: 17139, error: "duplicate key value violates" };

function render(rows: Row[] = [ROW], empty?: string): string {
  return renderToStaticMarkup(<DataTable columns={COLUMNS} rows={rows} rowKey={(r) => r.key} caption="Things" empty={empty} />);
}

describe("DataTable", () => {
  it("names each row by its first priority-1 column, and labels every cell for the stacked layout", () => {
    const html = render();
    expect(html).toMatch(/<th scope="row"[^>]*data-column="key"[^>]*data-label="Key"/);
    expect(html).toMatch(
      /<td[^>]*data-kind="number"[^>]*data-column="count"[^>]*data-priority="2"[^>]*data-label="Count">17139<\/td>/,
    );
    // The headings carry the priorities too: TableFit folds a table only when one has priority 3.
    expect(html).toMatch(/<th scope="col" data-kind="truncate" data-column="error" data-priority="3"/);
  });

  it("keeps a cut value's whole in its title and beside it a button that copies it", () => {
    const html = render();
    expect(html).toContain(`<span class="cell-truncate-text" title="${ROW.error}">${ROW.error}</span>`);
    expect(html).toMatch(
      new RegExp(`<button[^>]*class="copy-button"[^>]*aria-label="Copy the whole error"[^>]*data-copy="${ROW.error}"`),
    );
  });

  it("lets ids and keys break after their separators only, never inside a run of letters or digits", () => {
    const html = render();
    expect(html).toContain("<code>capture:<wbr/>ord-<wbr/>1</code>");
    expect(html).toContain("northwind-<wbr/>emea");
    // A number never gets a break.
    expect(html).toContain(">17139<");
  });

  it("declares every column's track, and the kept ones' for the folded layout", () => {
    const html = render();
    expect(html).toContain("--columns:auto auto auto minmax(10rem, 1fr)");
    expect(html).toContain("--kept-columns:auto auto auto");
    expect(html).toContain("--max-content-columns:repeat(4, max-content)");
  });

  it("says why a list is empty in a row across every column, and renders no row when not told to", () => {
    expect(render([], "Nothing here.")).toMatch(/<tr data-empty=""><td colSpan="4" class="muted">Nothing here.<\/td><\/tr>/i);
    expect(render([])).not.toContain("<tr data-empty");
  });
});

describe("word breaks", () => {
  it("splits a CamelCase name between its words", () => {
    expect(camelCaseParts("OnceboardUncaughtUniqueViolation")).toEqual(["Onceboard", "Uncaught", "Unique", "Violation"]);
    expect(camelCaseParts("Onceboard5xxRate")).toEqual(["Onceboard5xx", "Rate"]);
  });

  it("splits an identifier after each separator, keeping the separator with the part before", () => {
    expect(identifierParts("projects/northwind-prod/messages/17139")).toEqual([
      "projects/",
      "northwind-",
      "prod/",
      "messages/",
      "17139",
    ]);
    expect(identifierParts("ledger_entries.key")).toEqual(["ledger_", "entries.", "key"]);
    expect(identifierParts("17139")).toEqual(["17139"]);
  });
});
