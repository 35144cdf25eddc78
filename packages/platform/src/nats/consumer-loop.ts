import { setTimeout as sleep } from "node:timers/promises";
import type { Consumer, ConsumerMessages, JetStreamClient, JsMsg, NatsConnection } from "nats";
import type { Logger } from "../logger";
import { consumeSpan } from "./events";
import { KeptPull } from "./kept-pull";

export interface ConsumerSource {
  js: JetStreamClient;
  stream: string;
  /** A durable pull consumer provisioned by provisionTopology. */
  consumer: string;
  /** Messages handled at once. */
  concurrency: number;
  /**
   * Messages pulled ahead of the handlers (default: concurrency). 0: none; a
   * message is fetched only when a handler is free, so no message waits on
   * this process while its ack_wait runs (for long handlers, such as renders:
   * a message held here past ack_wait would be redelivered and spend one of
   * its deliveries without ever being tried). The messages are then pulled over
   * `nc`, js's connection (see KeptPull).
   */
  prefetch?: number;
  nc?: NatsConnection;
}

/** The pause before consuming again after consume() ended or failed unasked. */
const RESUME_MS = 1_000;

/**
 * Runs handle() for every message of a durable pull consumer, at most
 * `concurrency` at a time; a handler that throws goes to onError(). stop()
 * stops pulling (messages delivered but not started are redelivered after
 * ack_wait); finish() waits for the handlers still running.
 */
export abstract class ConsumerLoop {
  private messages: ConsumerMessages | undefined;
  /** The prefetch-0 mode's pulls. */
  private puller: KeptPull | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly source: ConsumerSource) {}

  protected abstract handle(msg: JsMsg): Promise<void>;

  protected abstract onError(err: unknown, msg: JsMsg): void;

  async start(): Promise<void> {
    const consumer = await this.source.js.consumers.get(this.source.stream, this.source.consumer);
    if (this.source.prefetch === 0) {
      if (!this.source.nc) throw new Error("the prefetch-0 mode pulls over the connection of js: pass it as nc");
      const { stream, consumer: name } = this.source;
      this.puller = new KeptPull(
        this.source.nc,
        stream,
        name,
        (msg) => this.dispatch(msg),
        () => this.pullIfFree(),
      );
      this.pullIfFree();
      return;
    }
    this.messages = await consumer.consume({ max_messages: this.source.prefetch ?? this.source.concurrency });
    this.loop = this.consumeUntilStopped(consumer, this.messages);
  }

  /**
   * Handles the messages of consume() until stop(). When the iteration ends
   * or fails otherwise (the server restarted, the consumer was missing for a
   * moment), consumption starts again after a pause, rather than the process
   * silently consuming nothing (or dying of an unhandled rejection).
   */
  private async consumeUntilStopped(consumer: Consumer, first: ConsumerMessages): Promise<void> {
    let messages: ConsumerMessages | undefined = first;
    while (!this.stopped) {
      try {
        messages ??= this.messages = await consumer.consume({ max_messages: this.source.prefetch ?? this.source.concurrency });
        for await (const msg of messages) {
          this.dispatch(msg);
          await this.capacity();
        }
      } catch {
        // Started again below.
      }
      messages = undefined;
      if (!this.stopped) await sleep(RESUME_MS);
    }
  }

  /** In the prefetch-0 mode, asks for the next message while a handler is free. */
  private pullIfFree(): void {
    if (!this.stopped && this.inFlight.size < this.source.concurrency) this.puller?.pull();
  }

  private dispatch(msg: JsMsg): void {
    const task: Promise<void> = this.handle(msg)
      .catch((err: unknown) => this.onError(err, msg))
      // An onError that throws (a nak on a connection going away) must not end the loop.
      .catch(() => undefined)
      .finally(() => {
        this.inFlight.delete(task);
        this.pullIfFree();
      });
    this.inFlight.add(task);
    this.pullIfFree();
  }

  private async capacity(): Promise<void> {
    while (this.inFlight.size >= this.source.concurrency) await Promise.race(this.inFlight);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // A message the puller receives while it closes is this process's: handled, even after stop().
    await Promise.all([this.messages?.close(), this.puller?.close()]);
    await this.loop;
  }

  async finish(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}

/** How an EventConsumer reads its messages. */
export interface EventSpec<E> {
  /** The consume span's name: the subject without ids. */
  spanSubject: string;
  /** Throws on a message that cannot be decoded. */
  decode(msg: JsMsg): E;
  /** Attributes of the consume span that name the event. */
  attributes(event: E, msg: JsMsg): Record<string, string | number | boolean>;
  /** Whether this consumer acts on the event (default: all); the others are acked unread. */
  wanted?(event: E): boolean;
  logger: Logger;
}

/**
 * A ConsumerLoop of one kind of event. Every message is decoded; one that
 * cannot be is logged and terminated (redelivering it cannot help). Events
 * the consumer does not act on are acked unread; the others go to apply()
 * inside a consume span that continues the publisher's trace. apply()
 * settles the message: ack, nak or term.
 */
export abstract class EventConsumer<E> extends ConsumerLoop {
  constructor(
    source: ConsumerSource,
    private readonly spec: EventSpec<E>,
  ) {
    super(source);
  }

  protected abstract apply(event: E, msg: JsMsg): Promise<void>;

  protected async handle(msg: JsMsg): Promise<void> {
    let event: E;
    try {
      event = this.spec.decode(msg);
    } catch (err) {
      this.spec.logger.error({ err, stream: msg.info.stream, seq: msg.seq }, "undecodable message; terminating it");
      msg.term("undecodable");
      return;
    }
    if (this.spec.wanted && !this.spec.wanted(event)) {
      msg.ack();
      return;
    }
    await consumeSpan(this.spec.spanSubject, msg.headers, this.spec.attributes(event, msg), () => this.apply(event, msg));
  }
}

/**
 * An EventConsumer that applies its events in batches, one batch at a time (a projection writes
 * each in one transaction), up to `maxBatch` events each. An event that comes after a quiet
 * `intervalMs` goes at once; while events keep coming, a batch starts at most every `intervalMs`
 * and takes all that came meanwhile, so a steady stream costs one transaction per interval rather
 * than one per event; a full batch (a backlog) is followed at once. Each message is acked once
 * its batch was applied; a failed batch sends each of its messages to onError().
 */
export abstract class BatchingEventConsumer<E> extends EventConsumer<E> {
  private pending: { event: E; done: (err?: unknown) => void }[] = [];
  private flushing: Promise<void> | undefined;
  /** When the last batch started, and whether it was full. */
  private last = { at: -Infinity, full: false };

  constructor(
    source: ConsumerSource,
    spec: EventSpec<E>,
    private readonly batching: { maxBatch: number; intervalMs: number },
  ) {
    super(source, spec);
  }

  protected abstract applyBatch(events: E[]): Promise<void>;

  protected async apply(event: E, msg: JsMsg): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.pending.push({ event, done: (err) => (err === undefined ? resolve() : reject(err)) });
      this.flushing ??= this.flush();
    });
    msg.ack();
  }

  /** Applies what is pending, batch after batch, until nothing is. */
  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const wait = this.last.full ? 0 : this.last.at + this.batching.intervalMs - performance.now();
      if (wait > 0) await sleep(wait);
      const batch = this.pending.splice(0, this.batching.maxBatch);
      this.last = { at: performance.now(), full: batch.length === this.batching.maxBatch };
      try {
        await this.applyBatch(batch.map((p) => p.event));
        for (const p of batch) p.done();
      } catch (err) {
        for (const p of batch) p.done(err);
      }
    }
    this.flushing = undefined;
  }
}
