import { renderV1 } from "@pressroom/contracts";

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

/** A catalog entry as GET /v1/templates answers it. */
export type CatalogEntry = ReturnType<typeof templateEntry>;
