import { renderV1 } from "@pressroom/contracts";
import { TEMPLATE_ID_PATTERN, call, templateNotFound } from "@pressroom/platform";
import type { Context } from "koa";
import type { GatewayDeps } from "../deps";

/** A catalog entry as GET /v1/templates answers it (and the pages show it). */
export function templateEntry(t: renderV1.Template) {
  const png = t.output === renderV1.OutputFormat.OUTPUT_FORMAT_PNG;
  return {
    id: t.id,
    version: t.version,
    name: t.name,
    description: t.description,
    output: png ? ("png" as const) : ("pdf" as const),
    ...(png && t.image
      ? { width: t.image.width, height: t.image.height, device_scale_factor: t.image.deviceScaleFactor || 1 }
      : {
          page: {
            format: t.page?.format ?? "A4",
            landscape: t.page?.landscape ?? false,
            margin: { top: t.page?.marginTop ?? "", right: t.page?.marginRight ?? "", bottom: t.page?.marginBottom ?? "", left: t.page?.marginLeft ?? "" },
            header: Boolean(t.page?.headerTemplate),
            footer: Boolean(t.page?.footerTemplate),
          },
        }),
    data_schema: JSON.parse(t.dataSchemaJson) as unknown,
    sample_data: JSON.parse(t.sampleDataJson) as unknown,
    preview_url: `/v1/templates/${t.id}/preview.png`,
  };
}

export function templateRoutes(deps: GatewayDeps) {
  const { catalog } = deps.clients;
  return {
    /** GET /v1/templates: public. */
    async listTemplates(ctx: Context) {
      const { templates } = await call(catalog, catalog.listTemplates, {});
      ctx.set("Cache-Control", "public, max-age=60");
      ctx.body = { templates: templates.map(templateEntry) };
    },

    /** GET /v1/templates/<id>/preview.png: public, rendered once per template version. */
    async templatePreview(ctx: Context) {
      const id = ctx.params.id as string;
      if (!TEMPLATE_ID_PATTERN.test(id)) {
        throw templateNotFound(id);
      }
      const preview = await call(catalog, catalog.getPreview, { id }, 60_000);
      ctx.status = 200;
      ctx.set("Cache-Control", "public, max-age=300");
      ctx.set("ETag", `"${id}-v${preview.version}"`);
      if (ctx.fresh) {
        ctx.status = 304;
        return;
      }
      ctx.type = "image/png";
      ctx.body = Buffer.from(preview.png);
    },
  };
}
