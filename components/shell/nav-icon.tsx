import type { NavIcon as NavIconName } from "./nav-items";

/** Each entry's glyph, drawn on a 16 × 16 grid. */
const GLYPHS: Record<NavIconName, string> = {
  overview: "M1 9h3v6H1zM6.5 5h3v10h-3zM12 1h3v14h-3z",
  retention: "M1 2h14v3H1zM2 6h12v8H2zm3 2v1h6V8z",
  keys: "M6.5 1a5.5 5.5 0 1 0 3.9 9.4l4.1 4.1 1.1-1.1-4.1-4.1A5.5 5.5 0 0 0 6.5 1Zm0 1.6a3.9 3.9 0 1 1 0 7.8 3.9 3.9 0 0 1 0-7.8Z",
  // A list, each row with its state's mark.
  states: "M1 2h3v3H1zm5 .5h9v2H6zM1 6.5h3v3H1zm5 .5h9v2H6zM1 11h3v3H1zm5 .5h9v2H6z",
  violations: "M8 1 0.5 15h15L8 1Zm-.8 5h1.6l-.2 5H7.4l-.2-5Zm.8 6.2a.9.9 0 1 1 0 1.8.9.9 0 0 1 0-1.8Z",
  // Two columns checked against each other.
  reconciliation: "M1 2h5v12H1zm9 0h5v12h-5zM6.5 7.2h3v1.6h-3z",
  gaps: "M1 14h14v1H1zM2 13V7h2v6zm3 0V3h2v10zm3 0V6h2v7zm3 0v-3h1.5v3zm2.5 0v-1.5H15V13z",
  audit: "M3 1h7l3 3v11H3zm2 5v1h6V6zm0 3v1h6V9zm0 3v1h4v-1z",
  admin:
    "M8 1 2 3.5V8c0 3.5 2.6 6.2 6 7 3.4-.8 6-3.5 6-7V3.5L8 1Zm0 3a2 2 0 1 1 0 4 2 2 0 0 1 0-4Zm-3 7.5C5.5 10 6.6 9 8 9s2.5 1 3 2.5c-.8.9-1.8 1.5-3 1.8-1.2-.3-2.2-.9-3-1.8Z",
};

/** A navigation entry's 16-pixel icon (decorative: the entry's label names it). */
export function NavIcon({ name }: { name: NavIconName }) {
  return (
    <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
      <path fill="currentColor" d={GLYPHS[name]} />
    </svg>
  );
}
