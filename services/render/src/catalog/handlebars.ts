import Handlebars from "handlebars";
import { registerHelpers } from "./builtin/helpers";

/**
 * One Handlebars environment for all documents: HTML-escaped by default, with
 * Pressroom's helpers. Built-in `log` is removed: it would write the
 * customer's text into the service log. No helper reaches server state.
 */
export const hbs = Handlebars.create();
hbs.unregisterHelper("log");
registerHelpers(hbs);

export type CompiledTemplate = (data: unknown) => string;

/** The template of `source`, compiled now: a source that does not compile throws here, not when it is first filled. */
export function compileTemplate(source: string): CompiledTemplate {
  // `log` is otherwise compiled as a known helper, called without the lookup that reports it missing.
  const template = hbs.compile(source, { strict: false, noEscape: false, preventIndent: true, knownHelpers: { log: false } });
  // Handlebars compiles on first use; `_setup`, which each render runs first with its own runtime options, compiles it now.
  (template as unknown as { _setup(runtimeOptions: object): void })._setup({});
  return (data) => template(data, { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false });
}
