import { storeOutput } from "@pressroom/domain";
import { readSealingPrivateKey, type ServiceParts } from "@pressroom/platform";
import type { RenderDeps } from "./deps";
import { EngineProducer } from "./producer/engine-producer";
import { observeRenderPool } from "./producer/metrics";
import { attemptLog } from "./worker/attempts";
import { DestinationSettler } from "./worker/destination";
import { JobExpiry } from "./worker/expiry";
import { RenderWorker } from "./worker/worker";

/**
 * What render runs beside its catalog: the render worker (the RENDER queue's
 * consumer), which hands each job to the producer (the engine, templates,
 * merging and post-processing) and stores what it makes, and the expiry of
 * overdue jobs on metering's request (worker/expiry.ts), and the end of jobs whose destination settled, on the
 * webhook service's (worker/destination.ts). Nothing runs until the runner starts them; Chromium and
 * the template threads close once the renders in flight have ended.
 */
export function createService(deps: RenderDeps): Pick<ServiceParts, "consumers" | "afterWork" | "ready"> {
  const { config, engine, logger, postprocessor } = deps;
  const { nc, js, jsm } = deps.bus;
  const producer = new EngineProducer({
    engine,
    templates: deps.catalog,
    expander: deps.expander,
    postprocessor,
    deadlineMs: config.RENDER_DEADLINE_MS,
    maxOutputBytes: config.RENDER_MAX_OUTPUT_BYTES,
  });
  const target = { storage: deps.storage, js, bucket: config.OUTPUT_BUCKET };
  const worker = new RenderWorker({
    nc,
    js,
    jsm,
    logger,
    producer,
    attempts: attemptLog(deps.db),
    store: (metadata, data) => storeOutput(target, metadata, data),
    announcedOutputMaxBytes: config.RENDER_ANNOUNCED_OUTPUT_MAX_BYTES,
    workerName: config.WORKER_NAME,
    slots: config.RENDER_SLOTS,
    sealingKey: readSealingPrivateKey(config.SEALING_KEY),
  });
  const expiry = new JobExpiry({ nc, js, jsm, logger, maxQueueWaitMs: config.RENDER_MAX_QUEUE_WAIT_MS, deadlineMs: config.RENDER_DEADLINE_MS });
  observeRenderPool({ engine, slots: config.RENDER_SLOTS });
  return {
    consumers: { "render queue": worker, "job expiry requests": expiry, "destination settled requests": new DestinationSettler({ nc, js, jsm, logger }) },
    afterWork: {
      chromium: () => engine.close(),
      "template threads": () => deps.expander.close(),
      "post-processing": async () => {
        await deps.postprocessHost?.close();
      },
    },
    ready: { slots: config.RENDER_SLOTS, browserPid: engine.stats().browserPid },
  };
}
