import { consumers, meter, streams, type Logger } from "@pressroom/platform";
import type { JetStreamManager } from "nats";

/**
 * The RENDER work queue, read from JetStream when scraped: the lag is the
 * `render-workers` consumer's pending plus ack-pending messages, the number
 * KEDA's nats-jetstream trigger scales the render pool on. The gateway
 * reports it, not the pool, so it stays visible when the pool is down or
 * scaled in; every gateway replica reports the same queue (dashboards take
 * the max).
 */
export function observeRenderQueue(jsm: JetStreamManager, logger: Logger): void {
  const m = meter();
  const lag = m.createObservableGauge("pressroom.render.queue.lag", {
    unit: "{job}",
    description: "Pending plus ack-pending messages of the render-workers consumer: the number KEDA scales the render pool on.",
  });
  const oldest = m.createObservableGauge("pressroom.render.queue.oldest_age", {
    unit: "s",
    description: "Age of the oldest job in the RENDER work queue (0 when empty).",
  });
  m.addBatchObservableCallback(
    async (result) => {
      try {
        const [consumer, stream] = await Promise.all([jsm.consumers.info(streams.RENDER, consumers.renderWorkers), jsm.streams.info(streams.RENDER)]);
        result.observe(lag, consumer.num_pending + consumer.num_ack_pending);
        result.observe(oldest, stream.state.messages > 0 ? Math.max(0, Date.now() - Date.parse(stream.state.first_ts)) / 1000 : 0);
      } catch (err) {
        logger.warn({ err }, "could not read the render queue for its metrics");
      }
    },
    [lag, oldest],
  );
}
