import { identityV1, meteringV1, renderV1, storageV1, webhookV1 } from "@pressroom/contracts";
import { createGrpcClient, type GrpcTls } from "@pressroom/platform";

export interface Clients {
  identity: identityV1.IdentityServiceClient;
  metering: meteringV1.MeteringServiceClient;
  catalog: renderV1.TemplateCatalogServiceClient;
  storage: storageV1.StorageServiceClient;
  /** The webhook service's read models (jobs, daily usage, deliveries) and replays. */
  webhook: webhookV1.WebhookServiceClient;
}

export function createClients(addresses: { identity: string; metering: string; render: string; storage: string; webhook: string }, tls: GrpcTls): Clients {
  return {
    identity: createGrpcClient(identityV1.IdentityServiceClient, addresses.identity, tls, "identity"),
    metering: createGrpcClient(meteringV1.MeteringServiceClient, addresses.metering, tls, "metering"),
    catalog: createGrpcClient(renderV1.TemplateCatalogServiceClient, addresses.render, tls, "render"),
    storage: createGrpcClient(storageV1.StorageServiceClient, addresses.storage, tls, "storage"),
    webhook: createGrpcClient(webhookV1.WebhookServiceClient, addresses.webhook, tls, "webhook"),
  };
}

export function closeClients(clients: Clients): void {
  for (const client of Object.values(clients)) client.close();
}
