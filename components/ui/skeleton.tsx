/** A grey placeholder block while data loads (hidden from screen readers: the loading state is announced elsewhere). */
export function Skeleton({ className }: { className?: string }) {
  return <div className={`skeleton ${className ?? ""}`} aria-hidden="true" />;
}
