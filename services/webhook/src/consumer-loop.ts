import type { ConsumerMessages, JetStreamClient, JsMsg } from "nats";

/**
 * Runs a handler for every message of a durable pull consumer, at most
 * `concurrency` at a time. stop() stops pulling (messages delivered but not
 * started are redelivered after ack_wait); finish() waits for the handlers
 * still running.
 */
export class ConsumerLoop {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly options: {
      js: JetStreamClient;
      stream: string;
      consumer: string;
      concurrency: number;
      handle: (msg: JsMsg) => Promise<void>;
      onError: (err: unknown, msg: JsMsg) => void;
    },
  ) {}

  async start(): Promise<void> {
    const consumer = await this.options.js.consumers.get(this.options.stream, this.options.consumer);
    this.messages = await consumer.consume({ max_messages: this.options.concurrency });
    this.loop = this.run(this.messages);
  }

  private async run(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      const task: Promise<void> = this.options
        .handle(msg)
        .catch((err: unknown) => this.options.onError(err, msg))
        .finally(() => this.inFlight.delete(task));
      this.inFlight.add(task);
      while (this.inFlight.size >= this.options.concurrency) await Promise.race(this.inFlight);
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
