import type { TimelineDelivery } from "@/lib/features/keys-and-effects/contract";
import type { DeliveryAnswer } from "@/lib/features/keys-and-effects/effects-types";
import { formatCount, formatCountOf, formatGap, formatMilliseconds, formatUtc } from "@/lib/format";

/** What each claim answer means, in the words of an incident. */
const ANSWER_TEXT: Record<DeliveryAnswer, string> = {
  claimed: "claimed: ran the step",
  duplicate: "duplicate: stored outcome returned",
  waited: "waited while in flight, then got the outcome",
  in_flight: "in flight elsewhere: wait ran out, redelivered later",
  takeover: "took over an expired lease",
  retry: "retried a failed attempt",
  abandoned: "owner died: marked abandoned, not run",
  key_reuse: "key reuse: different payload, refused",
  beyond_retention: "beyond retention: refused",
};

const ANSWER_TONE: Partial<Record<DeliveryAnswer, "success" | "warning" | "danger">> = {
  claimed: "success",
  takeover: "warning",
  retry: "warning",
  in_flight: "warning",
  abandoned: "danger",
  key_reuse: "danger",
  beyond_retention: "danger",
};

/** The key's deliveries, oldest first (newest last), each with its gap since the one before; the first delivery and takeovers marked. */
export function DeliveryTimeline({ deliveries, total }: { deliveries: TimelineDelivery[]; total: number }) {
  if (deliveries.length === 0) {
    return (
      <p className="muted" data-testid="timeline-empty">
        No deliveries recorded (the workers run with the timeline off, or have not flushed yet).
      </p>
    );
  }
  return (
    <>
      {total > deliveries.length ? (
        <p className="muted" data-testid="timeline-cut">
          The newest {formatCount(deliveries.length)} of {formatCountOf(total, "delivery", "deliveries")}.
        </p>
      ) : null}
      <ol className="timeline" data-testid="timeline">
        {deliveries.map((d) => (
          <li
            key={`${d.deliveredAt}-${d.worker}-${d.messageId ?? ""}-${d.answer}`}
            className="timeline-entry"
            data-testid="timeline-entry"
            data-answer={d.answer}
          >
            {d.gapSeconds !== null ? (
              <span className="timeline-gap muted" data-testid="timeline-gap">
                {formatGap(d.gapSeconds)}
              </span>
            ) : null}
            <span className="timeline-time">{formatUtc(d.deliveredAt)}</span>{" "}
            <span className="badge" data-tone={ANSWER_TONE[d.answer]} data-testid="timeline-mark">
              {d.first ? "first delivery" : d.answer === "takeover" ? "takeover" : d.answer.replace("_", " ")}
            </span>{" "}
            <span>{ANSWER_TEXT[d.answer]}</span>
            <span className="muted">
              {" "}
              · message {d.messageId ?? "–"}
              {d.deliveryAttempt !== null ? ` (delivery ${d.deliveryAttempt})` : ""} · attempt {d.effectAttempt} · {d.worker} ·
              claim {formatMilliseconds(d.claimMs)}
            </span>
          </li>
        ))}
      </ol>
    </>
  );
}
