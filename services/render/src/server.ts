import { renderV1 } from "@pressroom/contracts";
import type { GrpcService, MethodCallers } from "@pressroom/platform";
import { catalogService } from "./catalog/catalog.grpc";
import { PreviewQueue } from "./catalog/preview-queue";
import type { RenderDeps } from "./deps";

/** Who may call each method of the catalog (the peer named by the caller's certificate): only the gateway. */
export const CATALOG_CALLERS: MethodCallers<typeof renderV1.TemplateCatalogServiceService> = {
  listTemplates: ["gateway"],
  getTemplate: ["gateway"],
  getPreview: ["gateway"],
  previewDraft: ["gateway"],
  saveTemplate: ["gateway"],
  listTemplateVersions: ["gateway"],
  deleteTemplate: ["gateway"],
  getTemplateAsset: ["gateway"],
};

/** The template catalog's gRPC service (list, get, previews; customers' own templates), not yet bound to a port. */
export function createServer(deps: RenderDeps): GrpcService[] {
  const { catalog, expander, engine, postprocessor, logger, config, db } = deps;
  const previewQueue = new PreviewQueue({ slots: config.RENDER_PREVIEW_SLOTS, maxWaiting: config.RENDER_PREVIEW_QUEUE });
  const previewDeadlineMs = config.RENDER_PREVIEW_DEADLINE_MS;
  return [
    {
      definition: renderV1.TemplateCatalogServiceService,
      implementation: catalogService({
        catalog,
        expander,
        engine,
        postprocessor,
        db,
        js: deps.bus.js,
        previewDeadlineMs,
        maxOutputBytes: config.RENDER_MAX_OUTPUT_BYTES,
        previewQueue,
        logger,
      }),
      callers: CATALOG_CALLERS,
    },
  ];
}
