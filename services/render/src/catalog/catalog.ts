import { renderV1 } from "@pressroom/contracts";
import { templateNotFound } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { RenderDb } from "../db";
import type { PageSettings } from "../engine";
import { findTemplate, listLatest, type TemplateRow } from "./catalog.repository";

/**
 * The template catalog with its cache of rows by id@version (versions are
 * immutable, so they are cached for good). Templates are compiled and run by
 * the TemplateExpander's threads, never here.
 */
export class TemplateCatalog {
  private readonly versions = new Map<string, Promise<TemplateRow>>();

  constructor(private readonly db: Kysely<RenderDb>) {}

  list(): Promise<TemplateRow[]> {
    return listLatest(this.db);
  }

  async latest(id: string): Promise<TemplateRow> {
    const row = await findTemplate(this.db, id);
    if (!row) throw templateNotFound(id);
    return row;
  }

  /** One exact version of a template. */
  get(id: string, version: number): Promise<TemplateRow> {
    const key = `${id}@${version}`;
    let entry = this.versions.get(key);
    if (!entry) {
      entry = findTemplate(this.db, id, version).then((row) => {
        if (!row) throw templateNotFound(id);
        return row;
      });
      entry.catch(() => this.versions.delete(key));
      this.versions.set(key, entry);
    }
    return entry;
  }

  /** Loads the latest version of every template, so that no job waits for the database. Returns how many were loaded. */
  async warm(): Promise<number> {
    const rows = await this.list();
    for (const row of rows) this.versions.set(`${row.id}@${row.version}`, Promise.resolve(row));
    return rows.length;
  }
}

/** A PDF template's print settings, as the engine takes them. */
export function pageSettingsOf(row: Pick<TemplateRow, "page">): PageSettings | undefined {
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
