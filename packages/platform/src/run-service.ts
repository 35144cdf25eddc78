import { createServer as createHttpServer, type RequestListener, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { Socket } from "node:net";
import type { Client } from "@grpc/grpc-js";
import type { Kysely } from "kysely";
import type { JetStreamClient, JetStreamManager, NatsConnection } from "nats";
import { createDb, pingDb } from "./db/db";
import { createGrpcClient, grpcTlsOf, startGrpcServer, type ClientConstructor, type GrpcPeer, type GrpcService, type GrpcTls } from "./grpc";
import { Lifecycle, startHealthServer } from "./lifecycle";
import { createLogger, type Logger } from "./logger";
import { awaitTopology } from "./nats/bind";
import { connectNats } from "./nats/connection";
import type { TopologyNeeds } from "./nats/bind";

/** The settings the runner reads; the service's own schema holds them (baseConfigShape, grpcTlsShape, grpcServiceShape). */
export interface ServiceConfig {
  LOG_LEVEL: string;
  HEALTH_PORT: number;
  HEALTH_HOST?: string;
  SHUTDOWN_TIMEOUT_MS: number;
  SHUTDOWN_DELAY_MS?: number;
  GRPC_TLS_CA: string;
  GRPC_TLS_CERT: string;
  GRPC_TLS_KEY: string;
  GRPC_PORT?: number;
  GRPC_HOST?: string;
  HTTP_PORT?: number;
  HTTP_HOST?: string;
  DATABASE_URL?: string;
  DATABASE_POOL_MAX?: number;
  NATS_URL?: string;
  NATS_USER?: string;
  NATS_PASSWORD?: string;
}

/** A service's NATS connection, once what it binds to exists. */
export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/**
 * What a service's `connect` is given: each connection it opens here is
 * checked by /readyz and closed by the runner, in the shutdown's last stage
 * (NATS first, then the clients and whatever else was handed to closeWith,
 * Postgres last).
 */
export interface ServiceContext<C extends ServiceConfig> {
  readonly config: Readonly<C>;
  readonly logger: Logger;
  /** This service's mutual-TLS files (GRPC_TLS_*), for its gRPC server and clients. */
  readonly tls: GrpcTls;
  /** Whether /readyz answers ready. */
  isReady: () => Promise<boolean>;
  /** Postgres as the service's own role (DATABASE_URL), in its schema; a pool of `max` connections, by default DATABASE_POOL_MAX's. */
  database: <DB>(schema: string, options?: { max?: number }) => Kysely<DB>;
  /** NATS (NATS_URL, NATS_USER, NATS_PASSWORD), once the streams, consumers and buckets in `needs` exist. */
  nats: (needs: TopologyNeeds) => Promise<Bus>;
  /** A gRPC client of `peer` over mutual TLS. */
  grpcClient: <T extends Client>(Ctor: ClientConstructor<T>, address: string, peer: GrpcPeer) => T;
  /** Closes something else with the connections. */
  closeWith: (name: string, close: () => Promise<void> | void) => void;
  /** One more readiness check, beside the connections' own. */
  readyWhen: (check: () => Promise<boolean> | boolean) => void;
}

/** What consumes messages: stopped when the service stops consuming, its messages in flight awaited when it finishes its work. */
export interface Consumer {
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
  finish?(): Promise<void> | void;
}

/** What a service's `build` returns; nothing listens or runs until the runner starts it. */
export interface ServiceParts {
  /** Served by one gRPC server (GRPC_HOST:GRPC_PORT) with grpc.health.v1, each method open to its callers only. */
  grpc?: GrpcService[];
  /** How long the calls in flight may take to end once the server stops accepting (default 5 s). */
  grpcStopMs?: number;
  /** An HTTP handler, served on HTTP_HOST:HTTP_PORT; requestTimeoutMs bounds a request from its first byte to its answer's last. */
  http?: {
    listener: RequestListener;
    requestTimeoutMs: number;
    onClientError?: (err: NodeJS.ErrnoException, socket: Socket) => void;
    /**
     * Once the listener is closed, the requests in flight may end by themselves until
     * SHUTDOWN_ANSWER_RESERVE_MS before the shutdown's bound; then this is called to answer
     * the ones still waiting at once (the gateway: its sync requests, 202 with their job).
     */
    answerNow?: () => void;
  };
  /** Started after the servers listen; stopped at stopConsuming, in the order given. */
  consumers?: Record<string, Consumer>;
  /** Background loops (sweeps), started after the consumers; stopped once the consumers' work has ended. */
  loops?: Record<string, { start(): void; stop(): Promise<void> | void }>;
  /** Closed once the work in flight has ended, before the connections (a browser, worker threads). */
  afterWork?: Record<string, () => Promise<void> | void>;
  /** More fields for the "ready" log line. */
  ready?: Record<string, unknown>;
}

export interface ServiceDefinition<C extends ServiceConfig, D> {
  name: string;
  config: () => Readonly<C>;
  /** A logger made before the runner starts (render's, which launches Chromium first); else the runner makes it. */
  logger?: Logger;
  connect: (context: ServiceContext<C>) => Promise<D> | D;
  build: (deps: D, context: ServiceContext<C>) => Promise<ServiceParts> | ServiceParts;
}

/** What a stopping HTTP server keeps, of SHUTDOWN_TIMEOUT_MS, for its answers and the stages after it (NATS, connections, telemetry). */
export const SHUTDOWN_ANSWER_RESERVE_MS = 5_000;

/**
 * Runs a service: reads its config, serves /livez, /readyz and /metrics,
 * connects what it uses, builds and starts its parts, and on SIGTERM or
 * SIGINT shuts down in the lifecycle's order (see SHUTDOWN_STAGES). A start
 * that fails is logged and exits 1.
 */
export function runService<C extends ServiceConfig, D>(definition: ServiceDefinition<C, D>): void {
  startService(definition).catch((err: unknown) => {
    (definition.logger ?? createLogger(definition.name)).fatal({ err }, `${definition.name} failed to start`);
    process.exit(1);
  });
}

/** runService's start, which the runner's test drives without the signal handlers. */
export async function startService<C extends ServiceConfig, D>(
  definition: ServiceDefinition<C, D>,
  options: { handleSignals: boolean } = { handleSignals: true },
): Promise<{ lifecycle: Lifecycle; healthPort: number; grpcPort?: number; httpPort?: number }> {
  const { name } = definition;
  const config = definition.config();
  const logger = definition.logger ?? createLogger(name, config.LOG_LEVEL);
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_TIMEOUT_MS);
  if (options.handleSignals) lifecycle.handleSignals();
  const health = await startHealthServer(lifecycle, config.HEALTH_PORT, config.HEALTH_HOST);

  const connections = { nats: [] as NatsConnection[], others: [] as { name: string; close: () => Promise<void> | void }[], postgres: [] as Kysely<unknown>[] };
  const tls = grpcTlsOf(config);
  const context: ServiceContext<C> = {
    config,
    logger,
    tls,
    isReady: () => lifecycle.isReady(),
    database: <DB>(schema: string, dbOptions: { max?: number } = {}) => {
      if (!config.DATABASE_URL) throw new Error(`${name} has no DATABASE_URL`);
      const db = createDb<DB>({ url: config.DATABASE_URL, schema, logger, max: dbOptions.max ?? config.DATABASE_POOL_MAX });
      connections.postgres.push(db as Kysely<unknown>);
      lifecycle.addReadinessCheck(() => pingDb(db));
      return db;
    },
    nats: async (needs) => {
      if (!config.NATS_URL) throw new Error(`${name} has no NATS_URL`);
      const nc = await connectNats({ url: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, name, logger });
      connections.nats.push(nc);
      const jsm = await nc.jetstreamManager();
      await awaitTopology(jsm, needs, logger);
      lifecycle.addReadinessCheck(() => !nc.isClosed());
      return { nc, js: nc.jetstream(), jsm };
    },
    grpcClient: (Ctor, address, peer) => {
      const client = createGrpcClient(Ctor, address, tls, peer);
      connections.others.push({ name: `${peer} client`, close: () => client.close() });
      return client;
    },
    closeWith: (closeName, close) => {
      connections.others.push({ name: closeName, close });
    },
    readyWhen: (check) => {
      lifecycle.addReadinessCheck(check);
    },
  };

  const deps = await definition.connect(context);
  const parts = await definition.build(deps, context);
  const started: { grpcPort?: number; httpPort?: number } = {};

  if (parts.grpc) {
    if (config.GRPC_PORT === undefined || !config.GRPC_HOST) throw new Error(`${name} serves gRPC without GRPC_PORT and GRPC_HOST`);
    const grpc = await startGrpcServer({ port: config.GRPC_PORT, host: config.GRPC_HOST, tls, services: parts.grpc, logger });
    started.grpcPort = grpc.port;
    lifecycle.on("notReady", "grpc health", () => grpc.setServing(false));
    lifecycle.on("stopAccepting", "grpc", () => grpc.stop(parts.grpcStopMs ?? 5_000));
  }
  if (parts.http) {
    if (config.HTTP_PORT === undefined || !config.HTTP_HOST) throw new Error(`${name} serves HTTP without HTTP_PORT and HTTP_HOST`);
    const { HTTP_PORT: port, HTTP_HOST: host } = config;
    const { listener, requestTimeoutMs, onClientError, answerNow } = parts.http;
    const server = createHttpServer(listener);
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.requestTimeout = requestTimeoutMs;
    if (onClientError) server.on("clientError", onClientError);
    // Once stopping, every answer closes its connection: a client keeping it alive would send its next request to a closed server.
    const answering = new Set<ServerResponse>();
    let closing = false;
    server.on("request", (_request, response: ServerResponse) => {
      if (closing) response.setHeader("connection", "close");
      answering.add(response);
      response.once("close", () => answering.delete(response));
    });
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    const address = server.address();
    started.httpPort = typeof address === "object" && address ? address.port : port;
    lifecycle.on(
      "stopAccepting",
      "http",
      (remainingMs) =>
        new Promise<void>((resolve) => {
          closing = true;
          for (const response of answering) if (!response.headersSent) response.setHeader("connection", "close");
          // Connections whose answer had begun before the close go idle after it.
          const idle = setInterval(() => server.closeIdleConnections(), 200);
          const answer = setTimeout(() => answerNow?.(), Math.max(0, remainingMs - SHUTDOWN_ANSWER_RESERVE_MS));
          server.close(() => {
            clearInterval(idle);
            clearTimeout(answer);
            resolve();
          });
          server.closeIdleConnections();
        }),
    );
  }

  const consumers = Object.entries(parts.consumers ?? {});
  await Promise.all(consumers.map(([, consumer]) => consumer.start()));
  for (const [, loop] of Object.entries(parts.loops ?? {})) loop.start();

  for (const [consumerName, consumer] of consumers) lifecycle.on("stopConsuming", consumerName, () => consumer.stop());
  for (const [consumerName, consumer] of consumers) if (consumer.finish) lifecycle.on("finishWork", `${consumerName} in flight`, () => consumer.finish?.());
  for (const [loopName, loop] of Object.entries(parts.loops ?? {})) lifecycle.on("finishWork", loopName, () => loop.stop());
  for (const [partName, close] of Object.entries(parts.afterWork ?? {})) lifecycle.on("finishWork", partName, close);
  // The connections close last, once the work that uses them has ended.
  for (const nc of connections.nats) lifecycle.on("closeConnections", "nats", () => nc.drain());
  for (const other of connections.others) lifecycle.on("closeConnections", other.name, other.close);
  for (const db of connections.postgres) lifecycle.on("closeConnections", "postgres", () => db.destroy());

  const delayMs = config.SHUTDOWN_DELAY_MS ?? 0;
  if (delayMs > 0) lifecycle.on("notReady", "endpoints delay", (remainingMs) => sleep(Math.min(delayMs, remainingMs)));

  lifecycle.setReady();
  logger.info({ healthPort: health.port, ...started, ...parts.ready }, `${name} ready`);
  return { lifecycle, healthPort: health.port, ...started };
}
