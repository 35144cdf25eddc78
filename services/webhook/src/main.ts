/**
 * The webhook service runs two things, both fed by the JOBS stream: callback
 * delivery (delivery/: signed POSTs with retries) and the job audit
 * projection (audit/: every job event as a row). service.ts builds both.
 */
import { identityV1 } from "@pressroom/contracts";
import { consumers, runService, streams } from "@pressroom/platform";
import { databasePoolSize, loadWebhookConfig } from "./config";
import type { WebhookDb } from "./db";
import type { WebhookDeps } from "./deps";
import { configuredPoster } from "./delivery/http";
import { identitySecrets } from "./delivery/identity-client";
import { createService } from "./service";

const { JOBS, WEBHOOKS } = streams;

runService({
  name: "webhook",
  config: loadWebhookConfig,
  connect: async ({ config, logger, database, nats, grpcClient, closeWith }): Promise<WebhookDeps> => {
    const poster = configuredPoster(config, logger);
    closeWith("webhook poster", () => poster.close());
    const db = database<WebhookDb>("webhook", { max: databasePoolSize(config) });
    const needs = [consumers.webhookDispatch, consumers.auditProjection].map((name) => ({ stream: JOBS, name }));
    const bus = await nats({ streams: [JOBS, WEBHOOKS], consumers: [...needs, { stream: WEBHOOKS, name: consumers.webhookDelivery }] });
    const secrets = identitySecrets(grpcClient(identityV1.IdentityServiceClient, config.IDENTITY_ADDR, "identity"));
    return { config, db, bus, logger, poster, secrets };
  },
  build: createService,
});
