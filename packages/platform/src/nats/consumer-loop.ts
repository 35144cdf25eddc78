import type { ConsumerMessages, JetStreamClient, JsMsg } from "nats";

export interface ConsumerSource {
  js: JetStreamClient;
  stream: string;
  /** A durable pull consumer provisioned by provisionTopology. */
  consumer: string;
  /** Messages handled at once. */
  concurrency: number;
  /** Messages pulled ahead of the handlers (default: concurrency). */
  prefetch?: number;
}

/**
 * Runs handle() for every message of a durable pull consumer, at most
 * `concurrency` at a time; a handler that throws goes to onError(). stop()
 * stops pulling (messages delivered but not started are redelivered after
 * ack_wait); finish() waits for the handlers still running.
 */
export abstract class ConsumerLoop {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly source: ConsumerSource) {}

  protected abstract handle(msg: JsMsg): Promise<void>;

  protected abstract onError(err: unknown, msg: JsMsg): void;

  async start(): Promise<void> {
    const consumer = await this.source.js.consumers.get(this.source.stream, this.source.consumer);
    this.messages = await consumer.consume({ max_messages: this.source.prefetch ?? this.source.concurrency });
    this.loop = this.run(this.messages);
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      const task: Promise<void> = this.handle(msg)
        .catch((err: unknown) => this.onError(err, msg))
        .finally(() => this.inFlight.delete(task));
      this.inFlight.add(task);
      while (this.inFlight.size >= this.source.concurrency) await Promise.race(this.inFlight);
    }
  }

  async stop(): Promise<void> {
    await this.messages?.close();
    await this.loop;
  }

  async finish(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}
