import { COUNT_BUCKETS, meter, secondsHistogram } from "@pressroom/platform";
import { type JobEvent, type JobState } from "@pressroom/domain";

const deliveries = meter().createCounter("pressroom.webhook.deliveries", {
  unit: "{delivery}",
  description: "Webhook delivery steps by outcome: delivered, retried (an attempt failed, another is scheduled), gave_up.",
});
const latency = secondsHistogram("pressroom.webhook.delivery.latency", "From the job's end to its callback's delivery.");
const attempts = meter().createHistogram("pressroom.webhook.delivery.attempts", {
  unit: "{attempt}",
  description: "Attempts per callback, when it was delivered or given up on.",
  advice: { explicitBucketBoundaries: COUNT_BUCKETS },
});

/** Counts what the recorded events say happened to a job's callback: the one place webhook metrics are taken. */
export function recordDeliveryEvents(job: JobState, events: JobEvent[]): void {
  for (const event of events) {
    if (event.webhookDelivered) {
      deliveries.add(1, { outcome: "delivered" });
      attempts.record(event.webhookDelivered.attempt);
      latency.record(Math.max(0, Date.now() - Date.parse(job.finishedAt ?? job.createdAt)) / 1000);
    } else if (event.webhookExhausted) {
      deliveries.add(1, { outcome: "gave_up" });
      attempts.record(event.webhookExhausted.attempts);
    } else if (event.webhookAttempted?.nextAttemptAt) {
      deliveries.add(1, { outcome: "retried" });
    }
  }
}
