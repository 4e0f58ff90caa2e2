"use client";

/** Only when the root layout itself fails: it must render its own <html>. */
export default function GlobalError({ retry }: { error: unknown; retry: () => void }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: "system-ui, sans-serif", padding: "2rem" }}>
        <h1>Onceboard failed to start this page</h1>
        <p>The console server&apos;s log has the details.</p>
        <button type="button" onClick={retry}>
          Retry
        </button>
      </body>
    </html>
  );
}
