import type { CSSProperties, HTMLAttributes, ReactNode, TdHTMLAttributes } from "react";
import { CopyButton } from "./copy-button";
import { TableFit } from "./table-fit";
import { withIdentifierBreaks } from "./word-breaks";

/**
 * What a column holds, which decides how it behaves when the table is short of width. Nothing is
 * ever cut without its whole value at hand:
 * - `number`, `time`, `badge`, `action`: never wrapped, never cut (right-aligned for numbers). A
 *   table whose such columns do not fit folds or stacks its rows instead (see TableFit).
 * - `id`: a name or identifier (a tenant, a job type, a message id); it wraps only after its
 *   separators (`. _ - / :`), never inside a run of letters or digits; never cut.
 * - `key`: a long identifier (an effect key, a URL): as `id`, and inside a run too where one is
 *   wider than its column, which is at least 16 characters wide; never cut.
 * - `text`: words; wraps between them.
 * - `truncate`: one line cut with an ellipsis; the cell's title holds the whole value and a copy
 *   button copies it (`whole` gives it).
 */
export type ColumnKind = "number" | "time" | "id" | "badge" | "action" | "key" | "text" | "truncate";

/**
 * 1: names the row (a stacked row's first line, and the row's header cell unless another column
 * is); 2: what a reader scans (the default); 3: detail, last in a stacked row and in smaller type.
 */
export type ColumnPriority = 1 | 2 | 3;

type DataAttributes = { [name: `data-${string}`]: string | number | boolean | undefined };
export type CellAttributes = Pick<TdHTMLAttributes<HTMLTableCellElement>, "title" | "className" | "id"> & DataAttributes;
export type RowAttributes = Pick<HTMLAttributes<HTMLTableRowElement>, "id" | "className" | "aria-selected"> & DataAttributes;

export interface Column<Row> {
  /** Names the column: the cells' data-column and React key. */
  id: string;
  /** The heading's text, and each value's label when the rows stack. */
  label: string;
  /** Shown in the heading in place of `label` (an abbreviation: `label` then says it in full). */
  heading?: ReactNode;
  /** The heading's title: what the column counts, where the label is short. */
  headingTitle?: string;
  /** The heading is for screen readers only (an actions column); the stacked row shows no label. */
  headingHidden?: boolean;
  kind: ColumnKind;
  priority?: ColumnPriority;
  /** This column's cells are `<th scope="row">` (default: the first priority-1 column). */
  rowHeader?: boolean;
  cell: (row: Row) => ReactNode;
  /** For `truncate`: the whole value, the cell's title and what its copy button copies. */
  whole?: (row: Row) => string | null | undefined;
  /** A cell's own attributes: a test id, a tone, a title. */
  cellProps?: (row: Row) => CellAttributes;
}

/**
 * The console's one table: every list declares its columns here (what each holds, how much it
 * matters) and gets the same behaviour at every width. Where it fits it is a table; where it does
 * not, its priority-3 columns fold to lines under each row; where that does not fit either, each
 * row becomes a block of labelled values (TableFit decides, by measuring). No column hides behind
 * a sideways scroll, and no value is cut without its whole at hand.
 */
export function DataTable<Row>({
  columns,
  rows,
  rowKey,
  rowProps,
  caption,
  labelledBy,
  testId,
  className,
  empty,
}: {
  columns: readonly Column<Row>[];
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  rowProps?: (row: Row) => RowAttributes;
  /** For screen readers, when no visible heading names the table (else `labelledBy`). */
  caption?: string;
  labelledBy?: string;
  testId?: string;
  /** A class of the table's own, for its page's styles (added to data-table). */
  className?: string;
  /** A row of its own, across every column, when there are no rows (omit to render none). */
  empty?: ReactNode;
}) {
  const headerColumn = columns.find((c) => c.rowHeader) ?? columns.find((c) => c.priority === 1);
  // Until TableFit has measured (components/ui/table-fit.tsx), each column as wide as its content needs.
  const tracks = {
    "--columns": columns.map(track).join(" "),
    "--kept-columns": columns
      .filter((c) => c.priority !== 3)
      .map(track)
      .join(" "),
    "--max-content-columns": `repeat(${columns.length}, max-content)`,
  } as CSSProperties;
  return (
    <TableFit>
      <table
        className={className ? `data-table ${className}` : "data-table"}
        aria-labelledby={labelledBy}
        data-testid={testId}
        style={tracks}
      >
        {caption ? <caption className="sr-only">{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((column) => (
              <th
                key={column.id}
                scope="col"
                data-kind={column.kind}
                data-column={column.id}
                data-priority={column.priority ?? 2}
                className={column.kind === "number" ? "num" : undefined}
                title={column.headingTitle}
              >
                {column.headingHidden ? <span className="sr-only">{column.label}</span> : (column.heading ?? column.label)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && empty ? (
            <tr data-empty="">
              <td colSpan={columns.length} className="muted">
                {empty}
              </td>
            </tr>
          ) : null}
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowProps?.(row)}>
              {columns.map((column) => (
                <Cell key={column.id} column={column} row={row} header={column === headerColumn} />
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableFit>
  );
}

/**
 * A column's width: as wide as its content needs, sharing what is left (as a table's columns do);
 * a cut column takes what the others leave, never less than 10rem.
 */
function track(column: { kind: ColumnKind }): string {
  return column.kind === "truncate" ? "minmax(10rem, 1fr)" : "auto";
}

function Cell<Row>({ column, row, header }: { column: Column<Row>; row: Row; header: boolean }) {
  const own = column.cellProps?.(row) ?? {};
  const className = [column.kind === "number" ? "num" : undefined, own.className].filter(Boolean).join(" ") || undefined;
  const attributes = {
    ...own,
    className,
    "data-kind": column.kind,
    "data-column": column.id,
    "data-priority": column.priority ?? 2,
    "data-label": column.headingHidden ? undefined : column.label,
  };
  let content = column.cell(row);
  if (column.kind === "id" || column.kind === "key") content = withIdentifierBreaks(content);
  if (column.kind === "truncate") {
    const whole = column.whole?.(row) ?? undefined;
    content = (
      <span className="cell-truncate">
        <span className="cell-truncate-text" title={whole}>
          {content}
        </span>
        {whole ? <CopyButton value={whole} what={column.label} /> : null}
      </span>
    );
  }
  return header ? (
    <th scope="row" {...attributes}>
      {content}
    </th>
  ) : (
    <td {...attributes}>{content}</td>
  );
}
