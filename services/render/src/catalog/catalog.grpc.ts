import { renderV1 } from "@pressroom/contracts";
import { unary, type Logger } from "@pressroom/platform";
import type { RenderEngine } from "../engine";
import { pageSettingsOf, toProto, type TemplateCatalog } from "./catalog";
import type { TemplateExpander } from "./expander";

/** CSS pixel size of a page format at 96 dpi, for previews of PDF templates. */
const PAGE_PIXELS: Record<string, { width: number; height: number }> = {
  A4: { width: 794, height: 1123 },
  A5: { width: 559, height: 794 },
  Letter: { width: 816, height: 1056 },
  Legal: { width: 816, height: 1344 },
};

export function catalogService(deps: {
  catalog: TemplateCatalog;
  expander: TemplateExpander;
  engine: RenderEngine;
  deadlineMs: number;
  logger: Logger;
}): renderV1.TemplateCatalogServiceServer {
  const previews = new Map<string, Promise<Buffer>>();

  async function renderPreview(id: string): Promise<{ png: Buffer; version: number }> {
    const latest = await deps.catalog.latest(id);
    const key = `${id}@${latest.version}`;
    let preview = previews.get(key);
    if (!preview) {
      preview = (async () => {
        const row = await deps.catalog.get(id, latest.version);
        const html = await deps.expander.expand({ source: row.body, cacheKey: key, dataJson: JSON.stringify(row.sample_data), timeoutMs: deps.deadlineMs });
        const page = pageSettingsOf(row);
        const size = row.image ?? PAGE_PIXELS[page?.format ?? "A4"] ?? PAGE_PIXELS.A4!;
        const image = page?.landscape ? { width: size.height, height: size.width } : size;
        const output = await deps.engine.render({ html, kind: "png", image });
        return Buffer.from(output.data.buffer, output.data.byteOffset, output.data.byteLength);
      })();
      preview.catch(() => previews.delete(key));
      previews.set(key, preview);
    }
    return { png: await preview, version: latest.version };
  }

  return {
    listTemplates: unary(async () => ({ templates: (await deps.catalog.list()).map(toProto) }), deps.logger),
    getTemplate: unary(async (req: renderV1.GetTemplateRequest) => ({ template: toProto(await deps.catalog.latest(req.id)) }), deps.logger),
    getPreview: unary((req: renderV1.GetPreviewRequest) => renderPreview(req.id), deps.logger),
  };
}
