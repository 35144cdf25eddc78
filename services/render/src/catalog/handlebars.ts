import Handlebars from "handlebars";
import { registerHelpers } from "./builtin/helpers";

/** One Handlebars environment for all documents: HTML-escaped by default, with Pressroom's helpers. */
export const hbs = Handlebars.create();
registerHelpers(hbs);

export type CompiledTemplate = (data: unknown) => string;

export function compileTemplate(source: string): CompiledTemplate {
  const template = hbs.compile(source, { strict: false, noEscape: false, preventIndent: true });
  return (data) => template(data, { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false });
}
