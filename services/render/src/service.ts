import { renderV1, storageV1 } from "@pressroom/contracts";
import {
  awaitTopology,
  connectEarly,
  connectNats,
  consumers,
  createDb,
  createGrpcClient,
  grpcTlsOf,
  streams,
  type GrpcService,
  type GrpcTls,
  type Logger,
  type MethodCallers,
} from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { JetStreamManager, NatsConnection } from "nats";
import { TemplateCatalog } from "./catalog/catalog";
import { catalogService } from "./catalog/catalog.grpc";
import { TemplateExpander } from "./catalog/expander";
import type { Config } from "./config";
import type { RenderDb } from "./db";
import type { RenderEngine } from "./engine";
import { JobExpiry, type JobExpiryDeps } from "./worker/expiry";
import { RenderWorker, type WorkerDeps } from "./worker/worker";

/** What the render service is built from. */
export interface RenderDeps {
  config: Readonly<Config>;
  logger: Logger;
  engine: RenderEngine;
  db: Kysely<RenderDb>;
  nc: NatsConnection;
  jsm: JetStreamManager;
  catalog: TemplateCatalog;
  expander: TemplateExpander;
  storage: storageV1.StorageServiceClient;
  tls: GrpcTls;
}

/** Who may call each method of the catalog (the peer named by the caller's certificate): only the gateway. */
export const CATALOG_CALLERS: MethodCallers<typeof renderV1.TemplateCatalogServiceService> = {
  listTemplates: ["gateway"],
  getTemplate: ["gateway"],
  getPreview: ["gateway"],
};

/**
 * Connects the render service's dependencies while the engine (begun by
 * main.ts) launches Chromium and warms its pages: the first job finds its
 * templates compiled and its connection to storage open.
 */
export async function connectDependencies(config: Readonly<Config>, logger: Logger, starting: Promise<RenderEngine>): Promise<RenderDeps> {
  const db = createDb<RenderDb>({ url: config.DATABASE_URL, schema: "render", logger });
  const catalog = new TemplateCatalog(db);
  const expander = new TemplateExpander({ threads: config.RENDER_SLOTS, maxOutputBytes: config.RENDER_MAX_HTML_BYTES });
  const tls = grpcTlsOf(config);
  const storage = createGrpcClient(storageV1.StorageServiceClient, config.STORAGE_ADDR, tls, "storage");
  const connect = async () => {
    const nc = await connectNats({ url: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, name: "render", logger });
    const jsm = await nc.jetstreamManager();
    await awaitTopology(jsm, { streams: [streams.JOBS, streams.RENDER], consumers: [{ stream: streams.RENDER, name: consumers.renderWorkers }] }, logger);
    const [warmTemplates] = await Promise.all([catalog.warm(), connectEarly(storage, 1_000)]);
    logger.info({ warmTemplates }, "templates compiled");
    return { nc, jsm };
  };
  const [engine, { nc, jsm }] = await Promise.all([starting, connect()]);
  return { config, logger, engine, db, nc, jsm, catalog, expander, storage, tls };
}

/** The template catalog's gRPC service (list, get, previews), not yet bound to a port. */
export function createServer(deps: RenderDeps): GrpcService[] {
  const { catalog, expander, engine, logger, config } = deps;
  return [
    {
      definition: renderV1.TemplateCatalogServiceService,
      implementation: catalogService({ catalog, expander, engine, deadlineMs: config.RENDER_DEADLINE_MS, logger }),
      callers: CATALOG_CALLERS,
    },
  ];
}

/** The NATS clients and the logger the worker and the expiry both work with. */
function messaging({ nc, jsm, logger }: RenderDeps): Pick<WorkerDeps & JobExpiryDeps, "nc" | "js" | "jsm" | "logger"> {
  return { nc, js: nc.jetstream(), jsm, logger };
}

/** Ends overdue jobs on metering's request (worker/expiry.ts), not yet subscribed. */
export function createExpiry(deps: RenderDeps): JobExpiry {
  const { config } = deps;
  return new JobExpiry({
    ...messaging(deps),
    maxQueueWaitMs: config.RENDER_MAX_QUEUE_WAIT_MS,
    deadlineMs: config.RENDER_DEADLINE_MS,
  });
}

/** The render worker: the RENDER queue's consumer, not yet started. */
export function createService(deps: RenderDeps): RenderWorker {
  const { config } = deps;
  return new RenderWorker({
    ...messaging(deps),
    engine: deps.engine,
    catalog: deps.catalog,
    expander: deps.expander,
    deadlineMs: config.RENDER_DEADLINE_MS,
    storage: deps.storage,
    outputBucket: config.OUTPUT_BUCKET,
    announcedOutputMaxBytes: config.RENDER_ANNOUNCED_OUTPUT_MAX_BYTES,
    workerName: config.WORKER_NAME,
    slots: config.RENDER_SLOTS,
  });
}
