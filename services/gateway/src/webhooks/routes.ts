import type { webhookV1 } from "@pressroom/contracts";
import { call, type z } from "@pressroom/platform";
import type { Context } from "koa";
import { keyed, type KeyedDeps } from "../access/admission";
import { readQuery } from "../query";
import { Delivery, DeliveryListQuery, type DeliveryList } from "./api";

/** What the webhook routes use: the key checked and counted, and the webhook service's deliveries. */
export interface WebhookRouteDeps extends KeyedDeps {
  webhook: webhookV1.WebhookServiceClient;
}

/** A delivery as the API answers it (the service's empty values are the API's nulls). */
function deliveryBody(d: webhookV1.Delivery): z.input<typeof Delivery> {
  return {
    id: d.id,
    event_id: d.eventId,
    event_type: Delivery.shape.event_type.parse(d.eventType),
    job_id: d.jobId,
    attempt: d.attempt,
    status: Delivery.shape.status.parse(d.status),
    response_status: d.responseStatus || null,
    duration_ms: d.status === "pending" ? null : d.durationMs,
    created_at: d.createdAt,
    next_retry_at: d.nextRetryAt || null,
  };
}

export function webhookRoutes(deps: WebhookRouteDeps) {
  const { webhook } = deps;
  return {
    /** GET /v1/webhooks/deliveries */
    async deliveries(ctx: Context) {
      const principal = await keyed(deps, ctx);
      const query = readQuery(ctx, DeliveryListQuery, "See GET /v1/openapi.json for the parameters of GET /v1/webhooks/deliveries.");
      const page = await call(webhook, webhook.listDeliveries, {
        keyId: principal.keyId,
        jobId: query.job_id ?? "",
        limit: query.limit ?? 0,
        cursor: query.cursor ?? "",
      });
      ctx.set("Cache-Control", "no-store");
      ctx.body = { data: page.deliveries.map(deliveryBody), next_cursor: page.nextCursor || null } satisfies z.input<typeof DeliveryList>;
    },

    /** POST /v1/webhooks/deliveries/<id>/replay */
    async replay(ctx: Context) {
      const principal = await keyed(deps, ctx);
      const { delivery } = await call(webhook, webhook.replayDelivery, { keyId: principal.keyId, deliveryId: ctx.params.id as string });
      ctx.status = 202;
      ctx.set("Cache-Control", "no-store");
      ctx.body = deliveryBody(delivery!);
    },
  };
}
