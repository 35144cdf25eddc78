import { readSealingPrivateKey, type ServiceParts } from "@pressroom/platform";
import { AuditProjectionConsumer } from "./audit/audit-projection.consumer";
import { BatchCallbackConsumer } from "./delivery/batch-callback.consumer";
import { DeliveryConsumer } from "./delivery/delivery.consumer";
import { DestinationConsumer } from "./destinations/destination.consumer";
import type { WebhookDeps } from "./deps";
import { CatchUpLoop, Projector, ReadModelConsumer } from "./read-models/projection";

/**
 * The webhook service's consumers of NATS; nothing runs until the runner starts them. Callback
 * delivery: a job's WEBHOOKS message (render schedules it with the job's outcome) → the customer's
 * URL, with retries, and replays; a batch's end (batch.completed) → its one callback.
 * Destinations (destinations/): a rendered job's output PUT to the customer's presigned URL, on
 * the same schedule, before render ends the job. The job audit projection: every JOBS event → a row
 * of webhook.audit_job_events (see audit/). The read models (jobs, daily usage, deliveries; see
 * read-models/): every JOBS event, from the consumer and a catch-up loop that rebuilds a lost model.
 */
export function createService(deps: WebhookDeps): Pick<ServiceParts, "consumers" | "loops" | "ready"> {
  const { db, logger, poster, secrets, outputs, config } = deps;
  const { nc, js, jsm } = deps.bus;
  const concurrency = config.WEBHOOK_CONCURRENCY;
  const perKeyConcurrency = config.WEBHOOK_PER_KEY_CONCURRENCY;
  const policy = { baseMs: config.WEBHOOK_RETRY_BASE_MS, capMs: config.WEBHOOK_RETRY_CAP_MS, windowMs: config.WEBHOOK_RETRY_WINDOW_MS };
  const projector = new Projector({ db, jsm, logger });
  return {
    consumers: {
      "callback delivery": new DeliveryConsumer({ js, jsm, db, logger, poster, secrets, policy, concurrency, perKeyConcurrency }),
      "destination delivery": new DestinationConsumer({
        nc,
        js,
        jsm,
        db,
        logger,
        poster,
        outputs,
        sealingKey: readSealingPrivateKey(config.DESTINATION_SEALING_KEY),
        policy,
        concurrency,
        perKeyConcurrency,
      }),
      "batch callbacks": new BatchCallbackConsumer({ js, db, logger, poster, secrets, policy, concurrency }),
      "audit projection": new AuditProjectionConsumer({ js, db, logger }),
      "read models": new ReadModelConsumer({ js, projector, logger }),
    },
    loops: { "read model catch-up": new CatchUpLoop({ projector, logger }) },
    ready: { concurrency, perKeyConcurrency },
  };
}
