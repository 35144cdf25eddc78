import { renderV1 } from "@pressroom/contracts";

/** A catalog entry as GET /v1/templates answers it (and the pages show it): a public template, or the caller's own ("private"). */
export function templateEntry(t: renderV1.Template) {
  const png = t.output === renderV1.OutputFormat.OUTPUT_FORMAT_PNG;
  return {
    id: t.id,
    version: t.version,
    name: t.name,
    description: t.description,
    output: png ? ("png" as const) : ("pdf" as const),
    ...(png && t.image
      ? // The catalog keeps 1 or 2 (render's imageSettingsOf); proto3 sends 0 for unset.
        { width: t.image.width, height: t.image.height, device_scale_factor: (t.image.deviceScaleFactor || 1) as 1 | 2 }
      : {
          page: {
            format: t.page?.format ?? "A4",
            landscape: t.page?.landscape ?? false,
            margin: { top: t.page?.marginTop ?? "", right: t.page?.marginRight ?? "", bottom: t.page?.marginBottom ?? "", left: t.page?.marginLeft ?? "" },
            header: Boolean(t.page?.headerTemplate),
            footer: Boolean(t.page?.footerTemplate),
          },
        }),
    // JSON objects: the catalog checks both when it loads a template.
    data_schema: JSON.parse(t.dataSchemaJson) as Record<string, unknown>,
    sample_data: JSON.parse(t.sampleDataJson) as Record<string, unknown>,
    // An own template's version has its own preview (its versions keep theirs); the catalog's is its current version's.
    preview_url: t.owner ? `/v1/templates/${t.id}/versions/${t.version}/preview.png` : `/v1/templates/${t.id}/preview.png`,
    visibility: t.owner ? ("private" as const) : ("public" as const),
    // One own template read by its owner (not the lists): its source, its files' names and its default options, to edit it.
    ...(t.owner && t.html
      ? {
          html: t.html,
          asset_names: t.assetNames,
          assets: t.assets.map((a) => ({ name: a.name, size_bytes: Number(a.sizeBytes) })),
          options: JSON.parse(t.optionsJson || "{}") as Record<string, unknown>,
        }
      : {}),
  };
}

/** A catalog entry as GET /v1/templates answers it. */
export type CatalogEntry = ReturnType<typeof templateEntry>;
