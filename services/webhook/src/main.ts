/**
 * Fed by the JOBS stream: callback delivery (delivery/), the job audit projection (audit/) and the
 * read models its gRPC server answers from (read-models/, server.ts). service.ts builds the consumers.
 */
import { identityV1, storageV1 } from "@pressroom/contracts";
import { consumers, runService, streams } from "@pressroom/platform";
import { databasePoolSize, loadWebhookConfig } from "./config";
import type { WebhookDb } from "./db";
import type { WebhookDeps } from "./deps";
import { configuredPoster } from "./delivery/http";
import { identitySecrets } from "./delivery/identity-client";
import { storageOutputs } from "./destinations/output-reader";
import { createServer } from "./server";
import { createService } from "./service";
const { JOBS, WEBHOOKS, DESTINATIONS, BATCHES } = streams;

runService({
  name: "webhook",
  config: loadWebhookConfig,
  connect: async ({ config, logger, database, nats, grpcClient, closeWith }): Promise<WebhookDeps> => {
    const poster = configuredPoster(config, logger);
    closeWith("webhook poster", () => poster.close());
    const db = database<WebhookDb>("webhook", { max: databasePoolSize(config) });
    const needs: { stream: string; name: string }[] = [
      { stream: JOBS, name: consumers.auditProjection },
      { stream: JOBS, name: consumers.readModels },
      { stream: WEBHOOKS, name: consumers.webhookDelivery },
      { stream: DESTINATIONS, name: consumers.destinationDelivery },
      { stream: BATCHES, name: consumers.webhookBatchCallbacks },
    ];
    const bus = await nats({ streams: [JOBS, WEBHOOKS, DESTINATIONS, BATCHES], consumers: needs });
    const secrets = identitySecrets(grpcClient(identityV1.IdentityServiceClient, config.IDENTITY_ADDR, "identity"));
    const outputs = storageOutputs(grpcClient(storageV1.StorageServiceClient, config.STORAGE_ADDR, "storage"));
    return { config, db, bus, logger, poster, secrets, outputs };
  },
  build: (deps) => ({ grpc: createServer(deps), ...createService(deps) }),
});
