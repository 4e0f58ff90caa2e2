/** An error panel with what happened and a retry button (role=alert, so it is announced). */
export function ErrorState({
  title,
  message,
  code,
  hint,
  onRetry,
  retrying,
}: {
  title: string;
  message: string;
  code?: string;
  hint?: string;
  onRetry?: () => void;
  retrying?: boolean;
}) {
  return (
    <div className="state state-error" role="alert">
      <svg aria-hidden="true" viewBox="0 0 24 24" width="28" height="28" className="state-icon">
        <path
          fill="currentColor"
          d="M12 2 1 21h22L12 2Zm0 5.5 1 .1-.3 7h-1.4l-.3-7 1-.1Zm0 10.9a1.2 1.2 0 1 1 0-2.4 1.2 1.2 0 0 1 0 2.4Z"
        />
      </svg>
      <div className="state-body">
        <h2>{title}</h2>
        <p>{message}</p>
        {hint ? <p className="muted">{hint}</p> : null}
        {code ? (
          <p className="state-code">
            Error code <code>{code}</code>
          </p>
        ) : null}
        {onRetry ? (
          <button type="button" className="button" onClick={onRetry} disabled={retrying}>
            {retrying ? "Retrying…" : "Retry"}
          </button>
        ) : null}
      </div>
    </div>
  );
}
