import {
  AckPolicy,
  type ConsumerMessages,
  connect,
  DeliverPolicy,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  nanos,
  headers as natsHeaders,
} from "nats";
import {
  type DeadLetterInfo,
  type Decision,
  type DeliveryInfo,
  defaultRetryBackoffMs,
  type EffectsRunner,
  type IdempotentHandler,
  processDelivery,
  traceContextOf,
  undecodable,
  withAttemptLimit,
} from "./deliveries";

/**
 * NATS JetStream adapter (the `nats` client; NATS_URL). A durable pull consumer with explicit acks.
 *
 * Mapping onto JetStream's verbs:
 * - ack (first run or duplicate): `+ACK`.
 * - in flight elsewhere (retry-later): `-NAK` with the delay; JetStream redelivers after it. (The
 *   redelivery counts towards MaxDeliver: JetStream has no delay that does not.)
 * - dead-letter (key reuse, an invalid key, an undecodable body, the last delivery failed):
 *   `onDeadLetter`, a copy to `deadLetterSubject` if set (with the reason in headers), then
 *   `+TERM`: JetStream never delivers it again and emits a MSG_TERMINATED advisory.
 * - the handler's error: `-NAK` with the backoff's delay; at MaxDeliver it is dead-lettered instead.
 * - a long step: `+WPI` (working) every `workingIntervalMs` while the delivery runs, so AckWait is
 *   restarted and JetStream does not hand the message to another worker meanwhile.
 * - a worker that dies, or a connection that drops, before the ack: after AckWait JetStream
 *   redelivers (the delivery count + 1); the client reconnects by itself and the consumer pulls
 *   again. The library answers the redelivery with the stored outcome.
 *
 * The attempt is JetStream's delivery count (1 on the first delivery). The message id is the
 * publisher's `Nats-Msg-Id` if it set one, else `<stream>:<stream sequence>` — both stable across
 * redeliveries. `Nats-Msg-Id` dedupe is the stream's, on the publish side only, within the
 * stream's duplicate window (2 minutes by default): it drops a re-published copy, not a redelivery
 * of one stored message, and forgets the id after the window. See docs/adapters.md.
 */

export interface NatsWorkOptions<T, R> {
  effects: EffectsRunner;
  handler: IdempotentHandler<T, R>;
  /** A connection from natsConnection() (or any that reconnects by itself). Not closed by close(). */
  connection: NatsConnection;
  stream: string;
  /** The durable consumer (see assertJetStream). */
  durable: string;
  /** The queue name deliveries carry (the default job type). Defaults to the durable's name. */
  queue?: string;
  /** Deliveries run at once. Default 10. */
  concurrency?: number;
  /** How often a running delivery says `working`. Default a third of the consumer's AckWait. */
  workingIntervalMs?: number;
  /** Delay before attempt `attempt + 1` after attempt `attempt` failed. Default 1 s doubling, up to 60 s. */
  backoffMs?: (attempt: number) => number;
  /** The payload → the handler's message. Default JSON. A payload that does not decode is dead-lettered. */
  decode?: (data: Uint8Array) => T;
  /** Also publish each dead-lettered message here (JetStream publish; a stream should capture it). */
  deadLetterSubject?: string;
  inFlightDelayMs?: number;
  onDeadLetter?: (info: DeadLetterInfo<T | undefined>) => void | Promise<void>;
  onDecision?: (decision: Decision<R>, delivery: DeliveryInfo) => void;
}

export interface NatsConsumer {
  /** Deliveries being run now. */
  readonly inFlight: number;
  /** Stops pulling, waits for the runs in progress (and their acks). */
  close(): Promise<void>;
}

export const DEFAULT_CONCURRENCY = 10;
export const DEFAULT_ACK_WAIT_MS = 30_000;
export const DEFAULT_MAX_DELIVER = 5;
export const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;
/** Headers on a dead-lettered copy. */
export const DEAD_LETTER_REASON_HEADER = "Onceboard-Dead-Letter-Reason";
export const DEAD_LETTER_CODE_HEADER = "Onceboard-Dead-Letter-Code";

/** A connection that keeps reconnecting (the client's default gives up after 10 tries). */
export function natsConnection(url: string, name?: string): Promise<NatsConnection> {
  return connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
}

export interface JetStreamTopology {
  stream: string;
  subjects: string[];
  durable: string;
  /** The subject the consumer reads (default: all the stream's subjects). */
  filterSubject?: string;
  ackWaitMs?: number;
  maxDeliver?: number;
  /** Unacked messages the consumer hands out at most, across all its workers. */
  maxAckPending?: number;
  /** The stream's Nats-Msg-Id window. */
  duplicateWindowMs?: number;
}

/** Creates the stream and the durable consumer, or brings their settings up to these ones. */
export async function assertJetStream(jsm: JetStreamManager, topology: JetStreamTopology): Promise<void> {
  const stream = {
    name: topology.stream,
    subjects: topology.subjects,
    duplicate_window: nanos(topology.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS),
  };
  const streamExists = await jsm.streams.info(topology.stream).then(
    () => true,
    () => false,
  );
  if (streamExists) await jsm.streams.update(topology.stream, stream);
  else await jsm.streams.add(stream);
  const consumer = {
    ack_wait: nanos(topology.ackWaitMs ?? DEFAULT_ACK_WAIT_MS),
    max_deliver: topology.maxDeliver ?? DEFAULT_MAX_DELIVER,
    max_ack_pending: topology.maxAckPending ?? 1000,
    ...(topology.filterSubject ? { filter_subject: topology.filterSubject } : {}),
  };
  const consumerExists = await jsm.consumers.info(topology.stream, topology.durable).then(
    () => true,
    () => false,
  );
  if (consumerExists) await jsm.consumers.update(topology.stream, topology.durable, consumer);
  else
    await jsm.consumers.add(topology.stream, {
      durable_name: topology.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ...consumer,
    });
}

export function deliveryOfJsMsg(queue: string, message: JsMsg): DeliveryInfo {
  const msgId = message.headers?.get("Nats-Msg-Id");
  return {
    queue,
    messageId: msgId || `${message.info.stream}:${message.info.streamSequence}`,
    attempt: message.info.redeliveryCount,
    redelivered: message.info.redeliveryCount > 1,
    publishedAt: new Date(Math.floor(message.info.timestampNanos / 1e6)),
    traceContext: traceContextOf(message.headers?.get("traceparent")),
  };
}

const defaultDecode = (data: Uint8Array) => JSON.parse(new TextDecoder().decode(data));

export async function consumeIdempotent<T, R>(options: NatsWorkOptions<T, R>): Promise<NatsConsumer> {
  const queue = options.queue ?? options.durable;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const backoffMs = options.backoffMs ?? defaultRetryBackoffMs;
  const decode = options.decode ?? (defaultDecode as (data: Uint8Array) => T);
  const js = options.connection.jetstream();
  const consumer = await js.consumers.get(options.stream, options.durable);
  const { config } = await consumer.info();
  const ackWaitMs = config.ack_wait ? config.ack_wait / 1e6 : DEFAULT_ACK_WAIT_MS;
  const maxDeliver = config.max_deliver && config.max_deliver > 0 ? config.max_deliver : Number.POSITIVE_INFINITY;
  const workingIntervalMs = options.workingIntervalMs ?? Math.max(100, Math.floor(ackWaitMs / 3));
  const inFlight = new Set<Promise<void>>();
  let closing = false;
  let messages: ConsumerMessages | null = null;

  async function handle(message: JsMsg): Promise<void> {
    const delivery = deliveryOfJsMsg(queue, message);
    // Tell JetStream the delivery is alive for as long as it runs, AckWait after AckWait.
    const working = setInterval(() => message.working(), workingIntervalMs);
    let data: T | undefined;
    let decision: Decision<R>;
    try {
      try {
        data = decode(message.data);
      } catch (error) {
        decision = undecodable(error);
      }
      decision ??= await processDelivery(options.effects, options.handler, data as T, delivery, {
        inFlightDelayMs: options.inFlightDelayMs,
      });
      // MaxDeliver's last delivery failing: dead-lettered here, since JetStream would only stop.
      decision = withAttemptLimit(decision, delivery.attempt, maxDeliver);
      options.onDecision?.(decision, delivery);
      switch (decision.action) {
        case "ack":
          message.ack();
          return;
        case "retry-later":
          message.nak(decision.delayMs);
          return;
        case "fail":
          message.nak(backoffMs(delivery.attempt));
          return;
        case "dead-letter": {
          await options.onDeadLetter?.({ queue, data, reason: decision.reason, code: decision.code, delivery });
          if (options.deadLetterSubject) {
            const h = natsHeaders();
            h.set(DEAD_LETTER_REASON_HEADER, decision.reason.replace(/[\r\n]+/g, " "));
            h.set(DEAD_LETTER_CODE_HEADER, decision.code);
            // One dead-lettered copy per stored message, even if this step runs twice.
            await js.publish(options.deadLetterSubject, message.data, {
              headers: h,
              msgID: `dead-letter:${message.info.stream}:${message.info.streamSequence}`,
            });
          }
          // No reason on the +TERM: servers before 2.10.4 do not parse `+TERM <reason>` and leave the
          // message pending (it would come back after AckWait). The reason is in onDeadLetter and
          // on the dead-letter copy.
          message.term();
          return;
        }
      }
    } catch {
      // The connection is down (the dead-letter copy could not be published, an ack was not
      // sent): JetStream redelivers after AckWait and the library answers the redelivery.
    } finally {
      clearInterval(working);
    }
  }

  async function pull(): Promise<void> {
    while (!closing) {
      try {
        messages = await consumer.consume({ max_messages: concurrency });
        for await (const message of messages) {
          const run = handle(message).finally(() => inFlight.delete(run));
          inFlight.add(run);
          while (inFlight.size >= concurrency) await Promise.race(inFlight);
        }
      } catch {
        // The consumer went away (deleted, the stream recreated): pull again after a pause.
      }
      if (!closing) await new Promise((r) => setTimeout(r, 500));
    }
  }

  const pulling = pull();
  return {
    get inFlight() {
      return inFlight.size;
    },
    async close() {
      closing = true;
      messages?.stop();
      await pulling;
      await Promise.allSettled([...inFlight]);
      // Acks are published asynchronously: flush them before the caller closes the connection.
      await options.connection.flush().catch(() => {});
    },
  };
}
