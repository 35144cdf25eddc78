import { DEFAULT_URL_VIEWPORT, type Margin, type RenderOptions } from "@pressroom/domain";
import type { ImageJson, PageJson, TemplateSettingsJson } from "../db";
import type { RenderJob } from "../engine";

/**
 * The one place a document becomes what the engine renders: a template (the
 * public catalog's or an account's own, the version a job was admitted with
 * or the latest, or a version being saved) with its page or image settings
 * and the request's options over them, raw HTML and a url's page with the
 * request's options alone, and a template's preview. Pure: the document
 * arrives expanded with its data, and so do the request's header and footer.
 */

/** What of a template decides how it renders: a stored version's row, or a version being saved. */
export interface TemplateSettings {
  /** The account that owns it (its key id); "" for the public catalog. */
  owner: string;
  output: "pdf" | "png";
  page: PageJson | null;
  image: ImageJson | null;
  settings: TemplateSettingsJson;
}

/** What of a template its preview needs (its output follows from its image). */
export type PreviewTemplate = Omit<TemplateSettings, "output">;

/** One document of a job, expanded: its HTML, its output and the request's options (their header and footer filled with its data). */
export interface DocumentInput {
  html: string;
  /** The request's output, when no template decides it. */
  kind: "pdf" | "png";
  options: RenderOptions;
  /** The API key whose windows the document runs in. */
  keyId: string;
  /** An own template's files, served at assets/<name>. */
  assets?: ReadonlyMap<string, Uint8Array>;
}

/** A template's page or image settings, in the shape of a request's options. */
export function templateOptions(template: Pick<TemplateSettings, "page" | "image">): RenderOptions {
  const { page, image } = template;
  return {
    ...(page
      ? {
          ...(page.format ? { format: page.format } : {}),
          landscape: page.landscape,
          margin: { top: page.margin_top, right: page.margin_right, bottom: page.margin_bottom, left: page.margin_left },
          headerHtml: page.header_template,
          footerHtml: page.footer_template,
        }
      : {}),
    ...(image ? imageSize(image) : {}),
  };
}

function imageSize(image: ImageJson): Pick<RenderOptions, "imageWidth" | "imageHeight" | "deviceScaleFactor"> {
  return { imageWidth: image.width, imageHeight: image.height, deviceScaleFactor: image.device_scale_factor ?? 1 };
}

/**
 * The request's options over a template's: each option the request gives wins, a margin side by
 * side; a paper the request names replaces the template's (a format its width and height, a
 * width and height its format).
 */
export function optionsOver(base: RenderOptions, request: RenderOptions): RenderOptions {
  const given = definedOf(request);
  const paper = given.format !== undefined ? { width: undefined, height: undefined } : given.width !== undefined ? { format: undefined } : {};
  const margin: Margin = { ...base.margin, ...definedOf(given.margin ?? {}) };
  return { ...base, ...paper, ...given, ...(Object.keys(margin).length > 0 ? { margin } : {}) };
}

function definedOf<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * What the engine renders for one document of a job: a template's with the request's options
 * over its settings (its own size for an image), or raw HTML's and a url's with the request's
 * options alone (an image the viewport they name, or DEFAULT_URL_VIEWPORT).
 */
export function engineJob(template: TemplateSettings | undefined, document: DocumentInput): RenderJob {
  const options = template ? optionsOver(templateOptions(template), document.options) : definedOf(document.options);
  const kind = template?.output ?? document.kind;
  const size = template?.image
    ? imageSize(template.image)
    : {
        imageWidth: options.imageWidth ?? DEFAULT_URL_VIEWPORT.width,
        imageHeight: options.imageHeight ?? DEFAULT_URL_VIEWPORT.height,
        deviceScaleFactor: options.deviceScaleFactor ?? 1,
      };
  return {
    html: document.html,
    kind,
    options: kind === "png" ? { ...options, ...size } : options,
    keyId: document.keyId,
    ...scriptErrorsOf(options, template),
    ...(document.assets ? { assets: document.assets } : {}),
  };
}

/**
 * What an uncaught exception in the document's script does: the request's fail_on_script_error
 * when it gives one, else the template's setting (a template's stored opt-out), else it fails.
 */
function scriptErrorsOf(options: RenderOptions, template: TemplateSettings | undefined): Pick<RenderJob, "scriptErrors"> {
  if (options.failOnScriptError !== undefined) return { scriptErrors: options.failOnScriptError ? "fail" : "ignore" };
  return template ? { scriptErrors: template.settings.script_errors ?? "fail" } : {};
}

/**
 * A template's preview. A png template's: a PNG of what its sample data makes, at its image's
 * size. A pdf template's: its PDF printed as a job of it with no options of its own would be
 * (its paper, margins, header and footer, and its version's default `options`, their header
 * and footer filled with the sample data), whose first page the post-processing process then
 * draws (catalog.grpc.ts). An own template's customer HTML runs only in its owner's windows;
 * the public catalog's in the shared ones.
 */
export function previewJob(template: PreviewTemplate, html: string, assets: ReadonlyMap<string, Uint8Array>, options: RenderOptions): RenderJob {
  const windows = template.owner ? { keyId: template.owner } : {};
  if (!template.image) {
    const { keyId: _owner, ...printed } = engineJob({ ...template, output: "pdf" }, { html, kind: "pdf", options, keyId: template.owner, assets });
    return { ...printed, ...windows };
  }
  return {
    html,
    kind: "png",
    options: { imageWidth: template.image.width, imageHeight: template.image.height },
    assets,
    scriptErrors: template.settings.script_errors ?? "fail",
    ...windows,
  };
}
