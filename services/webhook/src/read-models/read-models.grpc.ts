import type { webhookV1 } from "@pressroom/contracts";
import { unary, type Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { JetStreamClient, JetStreamManager } from "nats";
import type { WebhookDb } from "../db";
import { dailyUsage, listDeliveries, listJobs } from "./queries";
import { replayDelivery } from "./replay";

/** The WebhookService: the read models, one key's rows per call, and a delivery's replay. */
export function readModelService(deps: { db: Kysely<WebhookDb>; js: JetStreamClient; jsm: JetStreamManager; logger: Logger }): webhookV1.WebhookServiceServer {
  const { db, logger } = deps;
  return {
    listJobs: unary((req: webhookV1.ListJobsRequest) => listJobs(db, req), logger),
    getDailyUsage: unary((req: webhookV1.GetDailyUsageRequest) => dailyUsage(db, req), logger),
    listDeliveries: unary((req: webhookV1.ListDeliveriesRequest) => listDeliveries(db, req), logger),
    replayDelivery: unary((req: webhookV1.ReplayDeliveryRequest) => replayDelivery(deps, req), logger),
  };
}
