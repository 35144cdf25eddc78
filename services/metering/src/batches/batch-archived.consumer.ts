import { EventConsumer, consumers, streams, subjects, type Logger } from "@pressroom/platform";
import { decodeBatchEvent, type BatchArchived } from "@pressroom/domain";
import type { JetStreamClient, JsMsg } from "nats";
import type { BatchEnds } from "./batch-ends";

/** Consumes batch.archived (durable `metering-batches`): the batch's zip is recorded and its end announced. */
export class BatchArchivedConsumer extends EventConsumer<BatchArchived> {
  constructor(private readonly deps: { js: JetStreamClient; logger: Logger; ends: Pick<BatchEnds, "archived"> }) {
    super(
      { js: deps.js, stream: streams.BATCHES, consumer: consumers.meteringBatches, concurrency: 4 },
      {
        spanSubject: subjects.batchArchived,
        logger: deps.logger,
        decode: (msg) => decodeBatchEvent("batch.archived", msg.data),
        attributes: (event) => ({ "pressroom.batch.id": event.batch_id }),
      },
    );
  }

  protected async apply(event: BatchArchived, msg: JsMsg): Promise<void> {
    await this.deps.ends.archived(event);
    msg.ack();
  }

  protected onError(err: unknown, msg: JsMsg): void {
    this.deps.logger.warn({ err, seq: msg.seq }, "recording a batch's archive failed; will retry");
    msg.nak(1_000);
  }
}
