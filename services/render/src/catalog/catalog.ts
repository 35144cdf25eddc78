import { renderV1 } from "@pressroom/contracts";
import { AppError } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { RenderDb } from "../db";
import type { PageSettings } from "../engine";
import { findTemplate, listLatest, type TemplateRow } from "./catalog.repository";
import { compileTemplate, type CompiledTemplate } from "./handlebars";

export interface CatalogTemplate {
  row: TemplateRow;
  render: CompiledTemplate;
}

const notFound = (id: string) =>
  new AppError("TEMPLATE_NOT_FOUND", `template "${id}" does not exist`, "List the available templates with GET /v1/templates.");

/**
 * The template catalog with its caches: rows by id@version (versions are
 * immutable, so they are cached for good) and each version compiled once.
 */
export class TemplateCatalog {
  private readonly versions = new Map<string, Promise<CatalogTemplate>>();

  constructor(private readonly db: Kysely<RenderDb>) {}

  list(): Promise<TemplateRow[]> {
    return listLatest(this.db);
  }

  async latest(id: string): Promise<TemplateRow> {
    const row = await findTemplate(this.db, id);
    if (!row) throw notFound(id);
    return row;
  }

  /** The compiled template of one exact version. */
  get(id: string, version: number): Promise<CatalogTemplate> {
    const key = `${id}@${version}`;
    let entry = this.versions.get(key);
    if (!entry) {
      entry = findTemplate(this.db, id, version).then((row) => {
        if (!row) throw notFound(id);
        return { row, render: compileTemplate(row.body) };
      });
      entry.catch(() => this.versions.delete(key));
      this.versions.set(key, entry);
    }
    return entry;
  }

  /**
   * Loads and compiles the latest version of every template, rendering each
   * with its sample data once (Handlebars compiles on first use), so that no
   * job pays for it. Returns how many were warmed.
   */
  async warm(): Promise<number> {
    const rows = await this.list();
    for (const row of rows) {
      const render = compileTemplate(row.body);
      try {
        render(row.sample_data);
      } catch {
        // A template its own sample breaks still compiled; its jobs report the error.
      }
      this.versions.set(`${row.id}@${row.version}`, Promise.resolve({ row, render }));
    }
    return rows.length;
  }
}

export function pageSettingsOf(row: TemplateRow): PageSettings | undefined {
  if (!row.page) return undefined;
  return {
    format: row.page.format,
    landscape: row.page.landscape,
    marginTop: row.page.margin_top,
    marginRight: row.page.margin_right,
    marginBottom: row.page.margin_bottom,
    marginLeft: row.page.margin_left,
    headerTemplate: row.page.header_template,
    footerTemplate: row.page.footer_template,
  };
}

export function imageSettingsOf(row: TemplateRow): { width: number; height: number; deviceScaleFactor: 1 | 2 } | undefined {
  return row.image ? { width: row.image.width, height: row.image.height, deviceScaleFactor: row.image.device_scale_factor ?? 1 } : undefined;
}

export function toProto(row: TemplateRow): renderV1.Template {
  return {
    id: row.id,
    version: row.version,
    name: row.name,
    description: row.description,
    output: row.output === "png" ? renderV1.OutputFormat.OUTPUT_FORMAT_PNG : renderV1.OutputFormat.OUTPUT_FORMAT_PDF,
    page: pageSettingsOf(row),
    image: imageSettingsOf(row),
    dataSchemaJson: JSON.stringify(row.data_schema),
    sampleDataJson: JSON.stringify(row.sample_data),
  };
}
