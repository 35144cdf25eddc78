import { createServer as createHttpServer } from "node:http";
import { Lifecycle, awaitTopology, connectNats, consumers, createLogger, grpcTlsOf, startHealthServer, streams } from "@pressroom/platform";
import { RecentOutputs } from "@pressroom/domain";
import { Authenticator } from "./access/auth";
import { closeClients, createClients } from "./clients";
import { loadGatewayConfig } from "./config";
import type { GatewayDeps } from "./deps";
import { TrustedProxies } from "./client-ip";
import { answerClientError } from "./errors";
import { OutcomeInbox } from "./jobs/job-watch";
import { observeRenderQueue } from "./jobs/queue-metrics";
import { KEPT_OUTPUT_MAX_BYTES } from "./output-delivery";
import { createServer } from "./server";
import { TemplateDirectory } from "./templates/directory";

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const logger = createLogger("gateway", config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  lifecycle.handleSignals();
  await startHealthServer(lifecycle, config.HEALTH_PORT);

  const nc = await connectNats({ url: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, name: "gateway", logger });
  const jsm = await nc.jetstreamManager();
  await awaitTopology(jsm, { streams: [streams.JOBS, streams.RENDER], consumers: [{ stream: streams.RENDER, name: consumers.renderWorkers }] }, logger);
  observeRenderQueue(jsm, logger);
  const clients = createClients(
    { identity: config.IDENTITY_ADDR, metering: config.METERING_ADDR, render: config.RENDER_ADDR, storage: config.STORAGE_ADDR },
    grpcTlsOf(config),
  );

  lifecycle.addReadinessCheck(() => !nc.isClosed());
  const bus = { nc, js: nc.jetstream(), jsm };
  const deps: GatewayDeps = {
    logger,
    clients,
    auth: new Authenticator(clients.identity, config.AUTH_CACHE_MS),
    templates: new TemplateDirectory(clients.catalog, config.TEMPLATE_REFRESH_MS),
    bus,
    outcomes: new OutcomeInbox(bus),
    syncWaitMs: config.SYNC_WAIT_MS,
    recentOutputs: new RecentOutputs({ maxBytes: config.OUTPUT_CACHE_MAX_BYTES, maxEntryBytes: KEPT_OUTPUT_MAX_BYTES }),
    maxBodyBytes: config.MAX_BODY_BYTES,
    trustedProxies: new TrustedProxies(config.TRUSTED_PROXIES),
    isReady: () => lifecycle.isReady(),
  };

  const server = createHttpServer(createServer(deps).callback());
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = config.SYNC_WAIT_MS + 30_000;
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve) => server.listen(config.HTTP_PORT, config.HTTP_HOST, resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.HTTP_PORT;

  lifecycle.on(
    "stopAccepting",
    "http",
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  );
  // The server closed once its last request was answered: what those requests used closes now.
  lifecycle.on("closeConnections", "nats", () => nc.drain());
  lifecycle.on("closeConnections", "grpc clients", () => closeClients(clients));
  lifecycle.setReady();
  logger.info({ port }, "gateway ready");
}

main().catch((err: unknown) => {
  createLogger("gateway").fatal({ err }, "gateway failed to start");
  process.exit(1);
});
