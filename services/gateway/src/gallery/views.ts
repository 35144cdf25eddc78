import { DEMO_API_KEY, previewPixels } from "@pressroom/domain";
import { escapeHtml } from "../html";
import type { CatalogEntry } from "../catalog-entry";
import { snippets } from "../snippets";

type Schema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
};

/** Which page the navigation marks as the current one. */
type Section = "templates" | "docs";

function layout(title: string, section: Section, content: string, head = ""): string {
  const current = (name: Section) => (name === section ? ' aria-current="page"' : "");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Pressroom</title>
<link rel="stylesheet" href="/assets/pages.css">
${head}</head>
<body>
<a class="skip" href="#content">Skip to content</a>
<header class="site">
<a class="brand" href="/">Pressroom</a>
<nav aria-label="Main"><ul>
<li><a href="/"${current("templates")}>Templates</a></li>
<li><a href="/docs"${current("docs")}>API reference</a></li>
<li><a href="/v1/openapi.json">OpenAPI document</a></li>
<li><a href="/console">Console</a></li>
</ul></nav>
</header>
${content}
</body>
</html>
`;
}

/** "A4 portrait" or "1200 × 630 px". */
function sizeOf(template: CatalogEntry): string {
  if ("page" in template && template.page) return `${template.page.format} ${template.page.landscape ? "landscape" : "portrait"}`;
  if ("width" in template) return `${template.width} × ${template.height} px${template.device_scale_factor > 1 ? ` at ${template.device_scale_factor}×` : ""}`;
  return "";
}

function facts(template: CatalogEntry): string {
  return `<dl class="facts">
<div><dt>Output</dt><dd>${template.output.toUpperCase()}</dd></div>
<div><dt>${template.output === "png" ? "Size" : "Page"}</dt><dd>${escapeHtml(sizeOf(template))}</dd></div>
</dl>`;
}

/** The template's preview; `sized`, with its size in pixels, so that the page keeps the image's room while it loads (a card's box is fixed). */
function previewImage(template: CatalogEntry, sized = false): string {
  const { width, height } = previewPixels(template);
  const size = sized ? ` width="${width}" height="${height}"` : "";
  return `<img src="/templates/${escapeHtml(template.id)}/preview.png" alt="Preview of the ${escapeHtml(template.name)} template"${size}>`;
}

export function galleryPage(templates: CatalogEntry[]): string {
  const cards = templates
    .map(
      (t) => `<li><article class="card">
<div class="preview">${previewImage(t)}</div>
<h2><a href="/templates/${escapeHtml(t.id)}">${escapeHtml(t.name)}</a></h2>
<p>${escapeHtml(t.description)}</p>
${facts(t)}
</article></li>`,
    )
    .join("\n");
  return layout(
    "Templates",
    "templates",
    `<main id="content" class="page">
<h1>Templates</h1>
<p class="lead">Every template in the catalog, as it renders with its sample data. ` +
      `Open one to see its data schema, edit the data and render it with the public demo key, or copy the call for curl, JavaScript or Python.</p>
<ul class="cards">
${cards}
</ul>
</main>`,
  );
}

function typeLabel(schema: Schema): string {
  if (schema.anyOf) return schema.anyOf.map(typeLabel).join(" or ");
  const types = schema.type === undefined ? ["any"] : ([] as string[]).concat(schema.type);
  return types.map((type) => (type === "array" && schema.items ? `array of ${typeLabel(schema.items)}` : type)).join(" or ");
}

function rules(schema: Schema): string[] {
  const found: string[] = [];
  const range = (min: number | undefined, max: number | undefined, unit: string) => {
    const [low, high] = [min, max].map((n) => n?.toLocaleString("en-US"));
    if (low !== undefined && high !== undefined) found.push(`${low} to ${high}${unit}`);
    else if (low !== undefined) found.push(`at least ${low}${unit}`);
    else if (high !== undefined) found.push(`at most ${high}${unit}`);
  };
  range(schema.minLength, schema.maxLength, " characters");
  range(schema.minimum, schema.maximum, "");
  range(schema.minItems, schema.maxItems, " items");
  if (schema.format === "date") found.push("a date, YYYY-MM-DD");
  if (schema.pattern) found.push(`matches <code>${escapeHtml(schema.pattern)}</code>`);
  if (schema.enum) found.push(`one of ${schema.enum.map((v) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(", ")}`);
  return found;
}

/**
 * The order fields are shown in: the required ones as the schema lists them,
 * then the others alphabetically (the catalog stores schemas as jsonb, which
 * keeps no order of properties).
 */
function fieldOrder(schema: Schema): string[] {
  const required = (schema.required ?? []).filter((name) => schema.properties?.[name]);
  const optional = Object.keys(schema.properties ?? {})
    .filter((name) => !required.includes(name))
    .sort();
  return [...required, ...optional];
}

/** Data with its objects' keys in the schema's field order, for showing it. */
function ordered(schema: Schema | undefined, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => ordered(schema?.items, item));
  if (!schema?.properties || !value || typeof value !== "object") return value;
  const entries = value as Record<string, unknown>;
  const keys = [...fieldOrder(schema).filter((name) => name in entries), ...Object.keys(entries).filter((name) => !schema.properties![name])];
  return Object.fromEntries(keys.map((name) => [name, ordered(schema.properties![name], entries[name])]));
}

/** One row per field, nested objects and array items flattened to dotted paths ("items[].quantity"). */
function schemaRows(schema: Schema, prefix = ""): string[] {
  return fieldOrder(schema).flatMap((name) => {
    const field = schema.properties![name]!;
    const path = `${prefix}${name}`;
    const required = (schema.required ?? []).includes(name);
    const row =
      `<tr><th scope="row"><code>${escapeHtml(path)}</code></th><td>${escapeHtml(typeLabel(field))}</td><td>${required ? "yes" : "no"}</td>` +
      `<td>${rules(field).join("; ")}</td><td>${escapeHtml(field.description ?? "")}</td></tr>`;
    const nested = field.properties ? schemaRows(field, `${path}.`) : field.items?.properties ? schemaRows(field.items, `${path}[].`) : [];
    return [row, ...nested];
  });
}

/** JSON inside a data block: "<" escaped so the text can never close the script element. */
const dataBlock = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c");

export function templatePage(entry: CatalogEntry, baseUrl: string): string {
  const schema = entry.data_schema as Schema;
  const template = { ...entry, sample_data: ordered(schema, entry.sample_data) as Record<string, unknown> };
  const code = snippets(template, baseUrl, { literal: DEMO_API_KEY });
  const kind = template.output === "png" ? "PNG" : "PDF";
  const endpoint = template.output === "png" ? "/v1/image" : "/v1/render";
  const sample = JSON.stringify(template.sample_data, null, 2);
  return layout(
    template.name,
    "templates",
    `<main id="content" class="page">
<p class="crumbs"><a href="/">Templates</a> › ${escapeHtml(template.name)}</p>
<div class="detail">
<div>
<h1>${escapeHtml(template.name)}</h1>
<p class="lead">${escapeHtml(template.description)}</p>
${facts(template)}
<p>Template id <code>${escapeHtml(template.id)}</code>, version ${template.version}. Rendered with <code>POST ${endpoint}</code>.</p>
</div>
<figure>${previewImage(template, true)}<figcaption>Rendered with the sample data below.</figcaption></figure>
</div>

<section aria-labelledby="schema-title">
<h2 id="schema-title">Data schema</h2>
<p class="help">The <code>data</code> object this template takes (JSON Schema in <code>data_schema</code> of <code>GET /v1/templates</code>).</p>
<div class="schema-table"><table>
<thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Required</th>` +
      `<th scope="col">Rules</th><th scope="col">Description</th></tr></thead>
<tbody>
${schemaRows(schema).join("\n")}
</tbody>
</table></div>
</section>

<section aria-labelledby="try-title">
<h2 id="try-title">Try it</h2>
<form id="try-it" data-template="${escapeHtml(template.id)}" data-endpoint="${endpoint}" data-key="${escapeHtml(DEMO_API_KEY)}" novalidate>
<label for="try-data">Data (JSON), starting from the sample data</label>
<p class="help" id="try-help">Edit any value and render it with the public demo key (3 requests a minute, 1 render at a time). ` +
      `The data is checked against the schema before it is sent.</p>
<textarea id="try-data" name="data" spellcheck="false" aria-describedby="try-help try-problems">${escapeHtml(sample)}</textarea>
<div class="problems" id="try-problems" role="alert" hidden></div>
<div class="actions">
<button type="submit" disabled>Render ${kind}</button>
<button type="reset">Back to the sample data</button>
<span id="try-status" role="status"></span>
</div>
<noscript><p class="help">Rendering from this page needs JavaScript; the calls below do the same.</p></noscript>
</form>
<section class="result" id="try-result" aria-live="polite" hidden></section>
</section>

<section aria-labelledby="code-title" class="snippets">
<h2 id="code-title">Render it from code</h2>
<h3>curl</h3>
<pre><code>${escapeHtml(code.curl)}</code></pre>
<h3>JavaScript (<code>@pressroom/client</code>)</h3>
<pre><code>${escapeHtml(code.javascript)}</code></pre>
<h3>Python (<code>pressroom</code>)</h3>
<pre><code>${escapeHtml(code.python)}</code></pre>
</section>
<script type="application/json" id="data-schema">${dataBlock(template.data_schema)}</script>
</main>`,
    '<script type="module" src="/assets/try-it.mjs"></script>\n',
  );
}

export function docsPage(): string {
  return layout(
    "API reference",
    "docs",
    `<main id="content">
<h1 class="visually-hidden">API reference</h1>
<div id="api-reference"><noscript><p>The interactive reference needs JavaScript. ` +
      `The same content is in the <a href="/v1/openapi.json">OpenAPI document</a>.</p></noscript></div>
</main>`,
    '<link rel="stylesheet" href="/assets/swagger-ui/swagger-ui.css">\n' +
      '<script src="/assets/swagger-ui/swagger-ui-bundle.js"></script>\n<script type="module" src="/assets/docs.mjs"></script>\n',
  );
}

export function notFoundPage(id: string): string {
  return layout(
    "No such template",
    "templates",
    `<main id="content" class="page">
<h1>No template called “${escapeHtml(id)}”</h1>
<p><a href="/">See every template</a>.</p>
</main>`,
  );
}
