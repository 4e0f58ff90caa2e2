import { formatCount } from "@/lib/format";

/** A worker's counter as a table cell: "–" when the worker did not answer, tinted when `tone` and not zero. */
export function WorkerCountCell({ value, tone }: { value: number | null; tone?: "danger" }) {
  if (value === null) {
    return (
      <td className="num" data-zero="" title="No data: the worker did not answer">
        –
      </td>
    );
  }
  return (
    <td className="num" data-zero={value === 0 ? "" : undefined} data-tone={value > 0 ? tone : undefined}>
      {formatCount(value)}
    </td>
  );
}
