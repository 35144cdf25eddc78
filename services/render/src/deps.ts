import { storageV1 } from "@pressroom/contracts";
import { connectEarly, consumers, streams, type Bus, type Logger, type ServiceContext } from "@pressroom/platform";
import type { Kysely } from "kysely";
import { TemplateCatalog } from "./catalog/catalog";
import { TemplateExpander } from "./catalog/expander";
import type { Config } from "./config";
import type { RenderDb } from "./db";
import type { RenderEngine } from "./engine";
import { PostProcessClient, type PostProcessor } from "./postprocess/client";
import { PostProcessHost } from "./postprocess/host";

/** What the render service is built from. */
export interface RenderDeps {
  config: Readonly<Config>;
  logger: Logger;
  engine: RenderEngine;
  db: Kysely<RenderDb>;
  bus: Bus;
  catalog: TemplateCatalog;
  expander: TemplateExpander;
  storage: storageV1.StorageServiceClient;
  /** Post-processing, for the worker's jobs and the catalog's previews. */
  postprocessor: PostProcessor;
  /** The child process that post-processes, when the chart gives no container for it (RENDER_POSTPROCESS_URL). */
  postprocessHost: PostProcessHost | undefined;
}

/**
 * Connects the render service's dependencies while the engine (begun by
 * main.ts) launches Chromium and warms its pages: the first job finds its
 * templates compiled and its connection to storage open. The service is not
 * ready while the browser is relaunched, or while the Chromium container
 * restarts and the engine reconnects.
 */
export async function connectRender(context: ServiceContext<Config>, starting: Promise<RenderEngine>): Promise<RenderDeps> {
  const { config, logger } = context;
  const db = context.database<RenderDb>("render");
  const catalog = new TemplateCatalog(db);
  const expander = new TemplateExpander({ threads: config.RENDER_SLOTS, maxOutputBytes: config.RENDER_MAX_HTML_BYTES });
  const storage = context.grpcClient(storageV1.StorageServiceClient, config.STORAGE_ADDR, "storage");
  // The chart's post-processing container, or a child process of this worker's own (postprocess/host.ts).
  const remote = config.RENDER_POSTPROCESS_URL;
  const postprocessHost = remote === undefined ? new PostProcessHost(logger) : undefined;
  const postprocessor = new PostProcessClient(() => (postprocessHost ? postprocessHost.url() : Promise.resolve(remote!)));
  const connect = async () => {
    const bus = await context.nats({
      streams: [streams.JOBS, streams.RENDER, streams.ACCOUNTS],
      consumers: [{ stream: streams.RENDER, name: consumers.renderWorkers }],
    });
    const [warmTemplates] = await Promise.all([catalog.warm(), connectEarly(storage, 1_000)]);
    logger.info({ warmTemplates }, "templates compiled");
    return bus;
  };
  const [engine, bus] = await Promise.all([starting, connect()]);
  context.readyWhen(() => engine.stats().browserLive);
  return { config, logger, engine, db, bus, catalog, expander, storage, postprocessor, postprocessHost };
}
