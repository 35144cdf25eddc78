/** The gateway: the public HTTP API (server.ts) in front of identity, metering, render's catalog and storage, and the jobs it publishes on NATS. */
import { consumers, runService, streams } from "@pressroom/platform";
import { closeClients, createClients } from "./clients";
import { loadGatewayConfig } from "./config";
import { gatewayDeps } from "./deps";
import { answerClientError } from "./errors";
import { observeRenderQueue } from "./jobs/queue-metrics";
import { createServer } from "./server";
import { CustomerSchemas } from "./schemas/schemas";

runService({
  name: "gateway",
  config: loadGatewayConfig,
  connect: async ({ config, logger, tls, nats, closeWith, isReady }) => {
    const bus = await nats({ streams: [streams.JOBS, streams.RENDER], consumers: [{ stream: streams.RENDER, name: consumers.renderWorkers }] });
    observeRenderQueue(bus.jsm, logger);
    const clients = createClients(
      {
        identity: config.IDENTITY_ADDR,
        metering: config.METERING_ADDR,
        render: config.RENDER_ADDR,
        storage: config.STORAGE_ADDR,
        webhook: config.WEBHOOK_ADDR,
      },
      tls,
    );
    closeWith("grpc clients", () => closeClients(clients));
    const schemas = new CustomerSchemas({ threads: config.SCHEMA_THREADS });
    closeWith("schema threads", () => schemas.close());
    return gatewayDeps(config, { logger, clients, bus, isReady, schemas });
  },
  // A sync request may wait SYNC_WAIT_MS for its job, then write the document; when the process
  // stops, the waits still running near its bound answer 202 with their job (OutcomeInbox.answerNow).
  build: (deps, { config }) => ({
    http: {
      listener: createServer(deps).callback(),
      requestTimeoutMs: config.SYNC_WAIT_MS + 30_000,
      onClientError: answerClientError,
      answerNow: () => deps.outcomes.answerNow(),
    },
  }),
});
