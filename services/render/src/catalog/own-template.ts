import { createHash } from "node:crypto";
import { renderV1 } from "@pressroom/contracts";
import type { ImageJson, PageJson } from "../db";
import { hbs } from "./handlebars";
import type { NewVersion } from "./own-templates.repository";

/**
 * Where a template's Handlebars source fails to compile, as "line L, column
 * C: what was expected", or undefined when it compiles. The gateway has
 * checked everything else about the template (sizes, schema, sample data).
 */
export function compileProblem(source: string): string | undefined {
  try {
    hbs.precompile(source, { knownHelpers: { log: false } });
    return undefined;
  } catch (err) {
    const error = err as Error & { lineNumber?: number; column?: number };
    const lines = error.message.split("\n");
    if (error.lineNumber !== undefined) {
      return `does not compile at line ${error.lineNumber}, column ${(error.column ?? 0) + 1}: ${lines[0]!.replace(/ - \d+:\d+$/, "")}`;
    }
    // A parse error: the lexer stopped at the offending token.
    const at = ((hbs as unknown as { Parser: unknown }).Parser as { lexer: { yylloc: { first_line: number; first_column: number } } }).lexer.yylloc;
    return `does not compile at line ${at.first_line}, column ${at.first_column + 1}: ${lines[lines.length - 1]}`;
  }
}

/** Hex SHA-256 of a template's source: what the audit log records of it. */
export function sourceDigest(html: string): string {
  return createHash("sha256").update(html, "utf8").digest("hex");
}

/** The row and assets of a new version from the gateway's checked request; its page or image settings for the preview. */
export function newVersionOf(
  req: Pick<renderV1.SaveTemplateRequest, "template" | "html" | "assets">,
): NewVersion & { page: PageJson | null; image: ImageJson | null } {
  const t = req.template!;
  const png = t.output === renderV1.OutputFormat.OUTPUT_FORMAT_PNG;
  const page: PageJson | null =
    !png && t.page
      ? {
          format: t.page.format,
          landscape: t.page.landscape,
          margin_top: t.page.marginTop,
          margin_right: t.page.marginRight,
          margin_bottom: t.page.marginBottom,
          margin_left: t.page.marginLeft,
          header_template: "",
          footer_template: "",
        }
      : null;
  const image: ImageJson | null =
    png && t.image ? { width: t.image.width, height: t.image.height, device_scale_factor: t.image.deviceScaleFactor === 2 ? 2 : 1 } : null;
  return {
    page,
    image,
    row: {
      name: t.name,
      description: t.description,
      output: png ? "png" : "pdf",
      page: page && JSON.stringify(page),
      image: image && JSON.stringify(image),
      settings: "{}",
      data_schema: t.dataSchemaJson,
      sample_data: t.sampleDataJson,
      options: t.optionsJson || "{}",
      body: req.html,
      content_hash: sourceDigest(req.html),
    },
    assets: new Map(Object.entries(req.assets).map(([name, bytes]) => [name, Buffer.from(bytes)])),
  };
}
