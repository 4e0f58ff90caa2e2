import { createHash, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import amqp, { type ChannelModel, type ConfirmChannel, type ConsumeMessage, type Message, type Options } from "amqplib";
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
 * RabbitMQ adapter (amqplib, AMQP 0-9-1; RABBITMQ_URL).
 *
 * Mapping onto RabbitMQ's verbs (manual acks, `prefetch` deliveries unacked at most per channel):
 * - ack (first run or duplicate): `basic.ack`.
 * - in flight elsewhere (retry-later): a copy goes to `<queue>.retry` with a per-message TTL of the
 *   delay, and is acked only once the broker confirmed the copy. The retry queue dead-letters an
 *   expired copy back to `<queue>`. A delay does not spend an attempt.
 * - dead-letter (key reuse, an invalid key, an undecodable body, the last attempt failed):
 *   `onDeadLetter`, then `basic.nack(requeue=false)`: the broker routes it through
 *   `<queue>.dead-letter` (exchange) to `<queue>.dead-letter` (queue), with its `x-death` header.
 * - the handler's error: a copy to the retry queue with the backoff's delay and the attempt + 1,
 *   as above; at `maxAttempts` it is dead-lettered instead.
 * - a worker that dies, or a connection or channel that closes, before the ack: the broker puts
 *   every unacked delivery back (redelivered = true; on a quorum queue `x-delivery-count` + 1).
 *   The consumer reconnects and consumes again; the library answers the redelivery with the stored
 *   outcome (or "in flight" while the first run is still going in this process).
 * A copy is published before the original is acked, so a crash between the two leaves two copies
 * of the message, never none: the library is what makes the second one harmless.
 */

/** Headers this adapter writes on the copies it re-publishes. */
export const ATTEMPT_HEADER = "x-onceboard-attempt";
export const REDELIVERED_HEADER = "x-onceboard-redelivered";

export interface RabbitTopology {
  /** "quorum" (default: replicated, counts redeliveries in `x-delivery-count`) or "classic". */
  queueType?: "quorum" | "classic";
  /**
   * A quorum queue's `x-delivery-limit`: deliveries of one copy after which the broker itself
   * dead-letters it, for a message that kills its worker every time (the adapter never sees it
   * fail). Defaults to maxAttempts. Classic queues have no such limit.
   */
  deliveryLimit?: number;
}

export interface RabbitWorkOptions<T, R> extends RabbitTopology {
  effects: EffectsRunner;
  handler: IdempotentHandler<T, R>;
  /** amqp://user:pass@host:port/vhost */
  url: string;
  queue: string;
  /** Unacked deliveries this consumer holds at most, hence handler runs at once. Default 10. */
  prefetch?: number;
  /** Deliveries of a failing message (the handler's error) before it is dead-lettered. Default 5. */
  maxAttempts?: number;
  /** Delay before attempt `attempt + 1` after attempt `attempt` failed. Default 1 s doubling, up to 60 s. */
  backoffMs?: (attempt: number) => number;
  /** The body → the handler's message. Default JSON. A body that does not decode is dead-lettered. */
  decode?: (content: Buffer) => T;
  inFlightDelayMs?: number;
  /** Wait before reconnecting after the connection closed; doubles up to 30 s. Default 500 ms. */
  reconnectDelayMs?: number;
  socketOptions?: Options.Connect | object;
  onDeadLetter?: (info: DeadLetterInfo<T | undefined>) => void | Promise<void>;
  onDecision?: (decision: Decision<R>, delivery: DeliveryInfo) => void;
  /** Told of each lost connection, before the reconnect (for logs and tests). */
  onConnectionLost?: (error: Error | undefined) => void;
  /** Told of each (re)connection, once the consumer is consuming again. */
  onConnected?: (connection: ChannelModel) => void;
}

export interface RabbitConsumer {
  /** The live connection (null while reconnecting). */
  readonly connection: ChannelModel | null;
  /** Deliveries being run now. */
  readonly inFlight: number;
  /** Stops consuming, waits for the runs in progress, then closes the connection. */
  close(): Promise<void>;
}

export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_PREFETCH = 10;

export const retryQueueOf = (queue: string) => `${queue}.retry`;
export const deadLetterQueueOf = (queue: string) => `${queue}.dead-letter`;

/**
 * Asserts the queue, its retry queue and its dead-letter exchange and queue (idempotent; an
 * existing queue declared with other arguments makes the broker close the channel with
 * PRECONDITION_FAILED — declare it through this function everywhere, publishers included).
 */
export async function assertTopology(
  channel: Pick<ConfirmChannel, "assertQueue" | "assertExchange" | "bindQueue">,
  queue: string,
  topology: RabbitTopology & { maxAttempts?: number } = {},
): Promise<void> {
  const queueType = topology.queueType ?? "quorum";
  const deadLetter = deadLetterQueueOf(queue);
  await channel.assertExchange(deadLetter, "fanout", { durable: true });
  await channel.assertQueue(deadLetter, { durable: true, arguments: { "x-queue-type": queueType } });
  await channel.bindQueue(deadLetter, deadLetter, "");
  await channel.assertQueue(queue, {
    durable: true,
    arguments: {
      "x-queue-type": queueType,
      "x-dead-letter-exchange": deadLetter,
      ...(queueType === "quorum"
        ? { "x-delivery-limit": topology.deliveryLimit ?? topology.maxAttempts ?? DEFAULT_MAX_ATTEMPTS }
        : {}),
    },
  });
  await channel.assertQueue(retryQueueOf(queue), {
    durable: true,
    arguments: {
      "x-queue-type": queueType,
      // An expired copy goes back to the work queue through the default exchange.
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": queue,
      // Quorum queues can dead-letter at least once (the copy is kept until the work queue has
      // it); that needs reject-publish overflow. Classic queues dead-letter at most once.
      ...(queueType === "quorum" ? { "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish" } : {}),
    },
  });
}

/**
 * Publishes a message with what the adapter reads back: a message id, the publish time, persistence.
 * `delayMs`: it waits in the queue's retry queue first (per-message TTL, see the top of this file:
 * a lower bound), then arrives on the queue.
 */
export async function publishJson(
  channel: ConfirmChannel,
  queue: string,
  data: unknown,
  options: { messageId?: string; delayMs?: number } & Options.Publish = {},
): Promise<void> {
  const { messageId, delayMs, ...rest } = options;
  const delayed = delayMs !== undefined && delayMs > 0;
  await new Promise<void>((resolve, reject) =>
    channel.sendToQueue(
      delayed ? retryQueueOf(queue) : queue,
      Buffer.from(JSON.stringify(data)),
      {
        persistent: true,
        contentType: "application/json",
        messageId: messageId ?? randomUUID(),
        // AMQP's timestamp is in seconds.
        timestamp: Math.floor(Date.now() / 1000),
        ...(delayed ? { expiration: String(Math.round(delayMs)) } : {}),
        ...rest,
      },
      (error) => (error ? reject(error) : resolve()),
    ),
  );
}

function headerNumber(value: unknown): number | undefined {
  const n = typeof value === "number" ? value : typeof value === "string" || typeof value === "bigint" ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

export function deliveryOfAmqpMessage(queue: string, message: Message): DeliveryInfo {
  const headers = message.properties.headers ?? {};
  // The attempt this copy started at (a re-published copy carries it), plus the broker's own
  // redeliveries of this copy: counted on a quorum queue, only flagged on a classic one.
  const base = headerNumber(headers[ATTEMPT_HEADER]) ?? 1;
  const brokerRedeliveries = headerNumber(headers["x-delivery-count"]) ?? (message.fields.redelivered ? 1 : 0);
  const attempt = base + brokerRedeliveries;
  const timestamp = headerNumber(message.properties.timestamp);
  return {
    queue,
    // A publisher should set message_id; without one the body's hash stands in (stable across
    // redeliveries, shared by identical bodies — the library's key decides duplicates anyway).
    messageId:
      message.properties.messageId ?? `sha256:${createHash("sha256").update(message.content).digest("hex").slice(0, 32)}`,
    attempt,
    redelivered: message.fields.redelivered || attempt > 1 || headers[REDELIVERED_HEADER] === true,
    // Seconds per AMQP; a value past year 5138 in seconds is a publisher's milliseconds.
    publishedAt: timestamp === undefined ? undefined : new Date(timestamp > 1e11 ? timestamp : timestamp * 1000),
    traceContext: traceContextOf(headers.traceparent),
  };
}

const defaultDecode = (content: Buffer) => JSON.parse(content.toString("utf8"));

export async function consumeIdempotent<T, R>(options: RabbitWorkOptions<T, R>): Promise<RabbitConsumer> {
  const queue = options.queue;
  const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoffMs = options.backoffMs ?? defaultRetryBackoffMs;
  const decode = options.decode ?? (defaultDecode as (content: Buffer) => T);
  const baseReconnectMs = options.reconnectDelayMs ?? 500;
  const inFlight = new Set<Promise<void>>();
  let live: { connection: ChannelModel; channel: ConfirmChannel; consumerTag: string } | null = null;
  let closing = false;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let reconnectDelay = baseReconnectMs;

  /** A copy of the message to the retry queue, confirmed by the broker, expiring after `delayMs`. */
  const republish = (channel: ConfirmChannel, message: ConsumeMessage, attempt: number, delayMs: number) => {
    const { "x-delivery-count": _count, ...headers } = message.properties.headers ?? {};
    return new Promise<void>((resolve, reject) =>
      channel.sendToQueue(
        retryQueueOf(queue),
        message.content,
        {
          ...message.properties,
          persistent: true,
          expiration: String(Math.max(1, Math.round(delayMs))),
          headers: { ...headers, [ATTEMPT_HEADER]: attempt, [REDELIVERED_HEADER]: true },
        },
        (error) => (error ? reject(error) : resolve()),
      ),
    );
  };

  async function handle(channel: ConfirmChannel, message: ConsumeMessage): Promise<void> {
    const delivery = deliveryOfAmqpMessage(queue, message);
    let data: T | undefined;
    let decision: Decision<R>;
    try {
      data = decode(message.content);
    } catch (error) {
      decision = undecodable(error);
    }
    decision ??= await processDelivery(options.effects, options.handler, data as T, delivery, {
      inFlightDelayMs: options.inFlightDelayMs,
    });
    decision = withAttemptLimit(decision, delivery.attempt, maxAttempts);
    options.onDecision?.(decision, delivery);
    try {
      switch (decision.action) {
        case "ack":
          channel.ack(message);
          return;
        case "retry-later":
          await republish(channel, message, delivery.attempt, decision.delayMs);
          channel.ack(message);
          return;
        case "fail":
          await republish(channel, message, delivery.attempt + 1, backoffMs(delivery.attempt));
          channel.ack(message);
          return;
        case "dead-letter":
          await options.onDeadLetter?.({ queue, data, reason: decision.reason, code: decision.code, delivery });
          channel.nack(message, false, false);
          return;
      }
    } catch {
      // The channel closed under this delivery (the ack or the copy could not be sent): the broker
      // puts the message back as redelivered, and the next consumer's run is answered by the
      // library. Nothing to do here.
    }
  }

  function scheduleReconnect() {
    if (closing || reconnectTimer) return;
    reconnectTimer = setTimeout(async () => {
      reconnectTimer = undefined;
      try {
        await connect();
        reconnectDelay = baseReconnectMs;
      } catch {
        reconnectDelay = Math.min(reconnectDelay * 2, 30_000);
        scheduleReconnect();
      }
    }, reconnectDelay);
    reconnectTimer.unref?.();
  }

  async function connect(): Promise<void> {
    const connection = await amqp.connect(options.url, options.socketOptions);
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (live?.connection === connection) live = null;
      if (closing) return;
      options.onConnectionLost?.(error);
      scheduleReconnect();
    };
    // 'error' is always followed by 'close'; without a listener it would crash the process.
    connection.on("error", () => {});
    connection.on("close", onLost);
    try {
      const channel = await connection.createConfirmChannel();
      channel.on("error", () => {});
      // A channel the broker closed alone (a protocol error) takes the connection with it, so one
      // path recovers both.
      channel.on("close", () => {
        if (!closing) connection.close().catch(() => {});
      });
      await assertTopology(channel, queue, { queueType: options.queueType, deliveryLimit: options.deliveryLimit, maxAttempts });
      await channel.prefetch(prefetch);
      const { consumerTag } = await channel.consume(
        queue,
        (message) => {
          // null: the broker cancelled the consumer (the queue was deleted): reconnect re-asserts it.
          if (!message) {
            connection.close().catch(() => {});
            return;
          }
          const run = handle(channel, message).finally(() => inFlight.delete(run));
          inFlight.add(run);
        },
        { noAck: false },
      );
      live = { connection, channel, consumerTag };
      options.onConnected?.(connection);
    } catch (error) {
      lost = true;
      await connection.close().catch(() => {});
      throw error;
    }
  }

  await connect();
  return {
    get connection() {
      return live?.connection ?? null;
    },
    get inFlight() {
      return inFlight.size;
    },
    async close() {
      closing = true;
      clearTimeout(reconnectTimer);
      const current = live;
      // A connection that died without a close frame never answers the cancel: do not wait on it.
      if (current)
        await Promise.race([current.channel.cancel(current.consumerTag).catch(() => {}), sleep(5000, undefined, { ref: false })]);
      await Promise.allSettled([...inFlight]);
      if (current) await current.connection.close().catch(() => {});
      live = null;
    },
  };
}
