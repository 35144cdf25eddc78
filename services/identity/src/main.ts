/**
 * Identity: API keys, plans, signup and its throttle, revocation, webhook
 * secrets. One gRPC service (server.ts); account events go to ACCOUNTS.
 */
import {
  Lifecycle,
  awaitTopology,
  connectNats,
  createDb,
  createLogger,
  pingDb,
  grpcTlsOf,
  startGrpcServer,
  startHealthServer,
  streams,
} from "@pressroom/platform";
import { loadIdentityConfig } from "./config";
import type { IdentityDb } from "./db";
import { SecretBox } from "./keys/secret-box";
import { createServer } from "./server";

async function main(): Promise<void> {
  const config = loadIdentityConfig();
  const logger = createLogger("identity", config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  lifecycle.handleSignals();
  await startHealthServer(lifecycle, config.HEALTH_PORT);

  const db = createDb<IdentityDb>({ url: config.DATABASE_URL, schema: "identity", logger });
  const nc = await connectNats({ url: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, name: "identity", logger });
  await awaitTopology(await nc.jetstreamManager(), { streams: [streams.ACCOUNTS] }, logger);
  const secretBox = new SecretBox(config.WEBHOOK_SECRET_ENCRYPTION_KEY);

  const services = createServer({ db, js: nc.jetstream(), logger, signupLimitPerHour: config.SIGNUP_LIMIT_PER_HOUR, secretBox });
  const grpc = await startGrpcServer({ port: config.GRPC_PORT, host: config.GRPC_HOST, tls: grpcTlsOf(config), services, logger });

  lifecycle.addReadinessCheck(() => pingDb(db));
  lifecycle.addReadinessCheck(() => !nc.isClosed());
  lifecycle.on("notReady", "grpc health", () => grpc.setServing(false));
  lifecycle.on("stopAccepting", "grpc", () => grpc.stop(5_000));
  // The connections close last, once the work that uses them has ended, as in every service.
  lifecycle.on("closeConnections", "nats", () => nc.drain());
  lifecycle.on("closeConnections", "postgres", () => db.destroy());
  lifecycle.setReady();
  logger.info({ grpcPort: grpc.port }, "identity ready");
}

main().catch((err: unknown) => {
  createLogger("identity").fatal({ err }, "identity failed to start");
  process.exit(1);
});
