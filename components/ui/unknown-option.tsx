/**
 * A select's option for a value from the URL that is none of its choices: without it the select
 * would show its first choice, not what the link says (the page shows the error beside it).
 */
export function UnknownOption({ value, choices }: { value: string | null | undefined; choices: readonly string[] }) {
  if (!value || choices.includes(value)) return null;
  return <option value={value}>{value} (not a choice)</option>;
}
