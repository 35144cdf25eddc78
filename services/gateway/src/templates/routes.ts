import type { renderV1 } from "@pressroom/contracts";
import { call, type z } from "@pressroom/platform";
import { TEMPLATE_ID_PATTERN, templateNotFound } from "@pressroom/domain";
import type { Context } from "koa";
import { templateEntry } from "../catalog-entry";
import type { TemplateList } from "./api";

export function templateRoutes({ catalog }: { catalog: renderV1.TemplateCatalogServiceClient }) {
  return {
    /** GET /v1/templates: public. */
    async listTemplates(ctx: Context) {
      const { templates } = await call(catalog, catalog.listTemplates, {});
      ctx.set("Cache-Control", "public, max-age=60");
      ctx.body = { templates: templates.map(templateEntry) } satisfies z.input<typeof TemplateList>;
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
