import type { ImageOptions, RenderOptions } from "./types";

/** A template (GET /v1/templates): the public catalog's, or this key's own. */
export interface Template {
  id: string;
  version?: number;
  name: string;
  description: string;
  output: "pdf" | "png";
  /** PDF templates: page layout. */
  page?: {
    format: string;
    landscape: boolean;
    margin: { top: string; right: string; bottom: string; left: string };
    header: boolean;
    footer: boolean;
  };
  /** PNG templates: image size in pixels. */
  width?: number;
  height?: number;
  /** PNG templates: device pixels per pixel; at 2 the image is twice width by twice height. */
  device_scale_factor?: 1 | 2;
  /** JSON Schema that `data` must satisfy. */
  data_schema: unknown;
  sample_data: unknown;
  preview_url?: string;
  /** "public": the catalog's; "private": this key's own. */
  visibility?: "public" | "private";
  /** This key's own template, read by `template(id)`: the version's Handlebars source and its assets' names. */
  html?: string;
  asset_names?: string[];
  /** With `html`: the version's assets by name, with their sizes; `templateAsset(id, version, name)` reads one. */
  assets?: { name: string; size_bytes: number }[];
  /** With `html`: the version's default options ({} when none), which a render's or image's own options override field by field. */
  options?: RenderOptions | Omit<ImageOptions, "width" | "height" | "device_scale_factor">;
}

/** Body of POST /v1/templates (PUT /v1/templates/<id> takes the same; its id may be left out). */
export interface TemplateInput {
  /** ^[a-z0-9][a-z0-9-]{0,63}$, not an id of the public catalog. */
  id: string;
  name: string;
  description?: string;
  output: "pdf" | "png";
  /** The Handlebars source, at most 524,288 bytes as UTF-8. */
  html: string;
  /** JSON Schema (draft 2020-12), at most 65,536 bytes; default {"type":"object"}. */
  data_schema?: object;
  /** Satisfies data_schema; the preview renders it. Default {}. */
  sample_data?: object;
  /** pdf: default A4, portrait, 1 cm margins. */
  page?: { format?: string; landscape?: boolean; margin?: { top: string; right: string; bottom: string; left: string } };
  /** png: required, 1–4096 CSS pixels. */
  width?: number;
  height?: number;
  device_scale_factor?: 1 | 2;
  /** Files the html refers to as assets/<name>: each at most 1 MiB, all at most 5 MiB. */
  assets?: Record<string, Uint8Array>;
  /**
   * Default options of every render of this version: a render's (pdf) or an image's without the url's size (png), checked as a request's.
   * A request's own options override them field by field (objects such as margin and metadata per key).
   */
  options?: RenderOptions | Omit<ImageOptions, "width" | "height" | "device_scale_factor">;
}

/** GET /v1/templates/<id>/versions. */
export interface TemplateVersionsResponse {
  /** Newest first. */
  versions: { version: number; created_at: string }[];
}

export interface TemplatesResponse {
  templates: Template[];
}
