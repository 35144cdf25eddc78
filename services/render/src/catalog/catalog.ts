import { renderV1 } from "@pressroom/contracts";
import { templateNotFound, templateVersionNotFound } from "@pressroom/domain";
import type { Kysely } from "kysely";
import type { RenderDb } from "../db";
import { findTemplate, listLatest, type TemplateRow } from "./catalog.repository";
import { listVersions, loadAssets } from "./own-templates.repository";

/**
 * The template catalog with its cache of the public catalog's rows by
 * id@version (versions are immutable, so they are cached for good; customers'
 * own templates, without bound in number, are read from the database each
 * time). Templates are compiled and run by the TemplateExpander's threads,
 * never here.
 */
export class TemplateCatalog {
  private readonly versions = new Map<string, Promise<TemplateRow>>();

  constructor(private readonly db: Kysely<RenderDb>) {}

  /** The public catalog, and with an owner its own templates too. */
  list(owner = ""): Promise<TemplateRow[]> {
    return listLatest(this.db, owner);
  }

  /**
   * The template an owner names by id: its own live one, else the public one;
   * the current version, or `version` (of the own template's live generation).
   * A create that names a public id is refused, but a built-in added later
   * may take an id an account already uses: for that account the id still
   * names its own. Another account's templates are never found. A version
   * the template does not have is TEMPLATE_VERSION_NOT_FOUND, naming those it has.
   */
  async find(id: string, owner = "", version = 0): Promise<TemplateRow> {
    const own = owner ? await findTemplate(this.db, { owner, id }) : undefined;
    const row = own
      ? version && version !== own.version
        ? await findTemplate(this.db, { owner, id, generation: own.generation, version })
        : own
      : await findTemplate(this.db, { owner: "", id, version });
    if (row) return row;
    if (!version) throw templateNotFound(id);
    const versions = await listVersions(this.db, owner, id);
    throw templateVersionNotFound(
      id,
      version,
      versions.map((v) => v.version),
    );
  }

  /** Whether some account has a live template of its own with a public template's id (a built-in added after it). */
  async shadowed(id: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("templates")
      .select("owner")
      .where("id", "=", id)
      .where("owner", "<>", "")
      .where("deleted_at", "is", null)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * One exact version of a template, deleted or not (a job renders the version
   * it was admitted with); of its generation, or (0, a job admitted before
   * generations were recorded, when versions were never reused) the latest one that has it.
   */
  get(id: string, version: number, owner = "", generation = 0): Promise<TemplateRow> {
    const key = templateKey({ owner, id, generation, version });
    let entry = this.versions.get(key);
    if (!entry) {
      entry = findTemplate(this.db, { owner, id, generation, version, deleted: true }).then((row) => {
        if (!row) throw templateNotFound(id);
        return row;
      });
      if (owner) return entry;
      entry.catch(() => this.versions.delete(key));
      this.versions.set(key, entry);
    }
    return entry;
  }

  /** The files of one version of an own template. */
  assets(row: TemplateRow): Promise<Map<string, Buffer>> {
    return row.owner ? loadAssets(this.db, row) : Promise.resolve(new Map());
  }

  /** Loads the latest version of every public template, so that no job waits for the database. Returns how many were loaded. */
  async warm(): Promise<number> {
    const rows = await this.list();
    for (const row of rows) this.versions.set(templateKey(row), Promise.resolve(row));
    return rows.length;
  }
}

/** What names one version's content for good, for caches: owner/id#generation@version. */
export function templateKey(row: Pick<TemplateRow, "owner" | "id" | "generation" | "version">): string {
  return `${row.owner}/${row.id}#${row.generation}@${row.version}`;
}

/** A PDF template's page settings, as the catalog's contract describes them. */
export function pageSettingsOf(row: Pick<TemplateRow, "page">): renderV1.PageSettings | undefined {
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

export function toProto(row: TemplateRow, shadowed = false): renderV1.Template {
  return {
    shadowed,
    id: row.id,
    version: row.version,
    name: row.name,
    description: row.description,
    output: row.output === "png" ? renderV1.OutputFormat.OUTPUT_FORMAT_PNG : renderV1.OutputFormat.OUTPUT_FORMAT_PDF,
    page: pageSettingsOf(row),
    image: imageSettingsOf(row),
    dataSchemaJson: JSON.stringify(row.data_schema),
    sampleDataJson: JSON.stringify(row.sample_data),
    optionsJson: JSON.stringify(row.options),
    owner: row.owner,
    createdAt: row.created_at.toISOString(),
    generation: row.generation,
    html: "",
    assetNames: [],
    assets: [],
  };
}
