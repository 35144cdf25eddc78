import type { ColumnType, JSONColumnType } from "kysely";

export interface PageJson {
  format: string;
  landscape: boolean;
  margin_top: string;
  margin_right: string;
  margin_bottom: string;
  margin_left: string;
  header_template: string;
  footer_template: string;
}

/** A png template's size in CSS pixels; the output has device_scale_factor (1 or 2, default 1) device pixels per CSS pixel. */
export interface ImageJson {
  width: number;
  height: number;
  device_scale_factor?: 1 | 2;
}

/** A template's render settings (manifest `settings`); absent ones take the defaults. */
export interface TemplateSettingsJson {
  /** "ignore": render even when the template's script throws an uncaught exception (default "fail"). */
  script_errors?: "fail" | "ignore";
}

export interface TemplatesTable {
  /** The key id of the account that owns the template; "" for the built-in catalog. */
  owner: ColumnType<string, string | undefined, never>;
  id: string;
  /** The incarnation of (owner, id): 1, then one more for each create after a delete; its versions start at 1. */
  generation: ColumnType<number, number | undefined, never>;
  version: number;
  name: string;
  description: string;
  output: "pdf" | "png";
  page: JSONColumnType<PageJson | null, string | null, string | null>;
  image: JSONColumnType<ImageJson | null, string | null, string | null>;
  data_schema: JSONColumnType<Record<string, unknown>, string, string>;
  sample_data: JSONColumnType<Record<string, unknown>, string, string>;
  settings: JSONColumnType<TemplateSettingsJson, string | undefined, string>;
  /** An own template version's default options (a request's `options`, snake_case); {} for none and for the built-in catalog. */
  options: JSONColumnType<Record<string, unknown>, string | undefined, never>;
  body: string;
  content_hash: string;
  created_at: ColumnType<Date, Date | undefined, never>;
  /** Set on every version of an own template when it is deleted. */
  deleted_at: ColumnType<Date | null, never, Date>;
}

/** The files of one version of an own template, served to its document as assets/<name>. */
export interface TemplateAssetsTable {
  owner: string;
  id: string;
  /** The incarnation of (owner, id): 1, then one more for each create after a delete; its versions start at 1. */
  generation: ColumnType<number, number | undefined, never>;
  version: number;
  name: string;
  content: Buffer;
}

/** A template version's preview (PNG of its sample data), rendered once and kept for the current version only. */
export interface PreviewsTable {
  owner: string;
  id: string;
  generation: number;
  version: number;
  png: Buffer;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** How a render job's attempt ended when it ended without an outcome (see worker/attempts.ts). */
export interface AttemptEndsTable {
  job_id: string;
  attempt: number;
  ended: "died" | "retried";
  created_at: ColumnType<Date, Date | undefined, never>;
}

export interface RenderDb {
  templates: TemplatesTable;
  template_assets: TemplateAssetsTable;
  previews: PreviewsTable;
  attempt_ends: AttemptEndsTable;
}
