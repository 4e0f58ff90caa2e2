import type { ReactNode } from "react";

/** A panel saying there is nothing to show yet, and what to do about it. */
export function EmptyState({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="state state-empty">
      <svg aria-hidden="true" viewBox="0 0 24 24" width="28" height="28" className="state-icon">
        <path fill="none" stroke="currentColor" strokeWidth="1.6" d="M3 13h4l2 3h6l2-3h4M5 13l2-8h10l2 8v6H5z" />
      </svg>
      <div className="state-body">
        <h2>{title}</h2>
        {children}
      </div>
    </div>
  );
}
