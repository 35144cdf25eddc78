import { AuditProjectionConsumer } from "./audit/audit-projection.consumer";
import { DeliveryConsumer, type DeliveryDeps } from "./delivery/delivery.consumer";
import { DispatchConsumer } from "./delivery/dispatch.consumer";

/** Delivery's dependencies are a superset of the other two consumers'. */
export type ServiceDeps = DeliveryDeps;

/** The webhook service's two parts; both consume NATS, and nothing runs until started. */
export interface WebhookService {
  /** Callback delivery: dispatch (a job's terminal event → its WEBHOOKS message) and delivery (→ the customer's URL, with retries). */
  callbacks: { dispatch: DispatchConsumer; delivery: DeliveryConsumer };
  /** The job audit projection: every JOBS event → a row of webhook.audit_job_events (see audit/). */
  auditProjection: AuditProjectionConsumer;
}

export function createService(deps: ServiceDeps): WebhookService {
  const { js, jsm, db, logger } = deps;
  return {
    callbacks: { dispatch: new DispatchConsumer({ js, jsm, logger }), delivery: new DeliveryConsumer(deps) },
    auditProjection: new AuditProjectionConsumer({ js, db, logger }),
  };
}
