"use client";

import { useState } from "react";

/**
 * Copies a whole value to the clipboard: beside a value shown cut short, so the cut part is one
 * click away. Says "Copied" once done, or "Copy failed" where the browser refuses (no clipboard
 * outside a secure context): the whole value is still the cell's title.
 */
export function CopyButton({ value, what }: { value: string; what: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = () => {
    const done = navigator.clipboard?.writeText(value);
    if (!done) {
      setState("failed");
      return;
    }
    done.then(
      () => setState("copied"),
      () => setState("failed"),
    );
  };
  const shown = state === "copied" ? "Copied" : state === "failed" ? "Copy failed:" : "Copy";
  return (
    <button
      type="button"
      className="copy-button"
      onClick={copy}
      onBlur={() => setState("idle")}
      aria-label={`${shown} the whole ${what.toLowerCase()}`}
      title={`Copy: ${value}`}
      data-copy={value}
    >
      {shown.replace(":", "")}
    </button>
  );
}
