/**
 * How to render a template from code, for the pages that show it (a template's gallery page, with
 * the public demo key; the console, with the key in an environment variable). Imports nothing that
 * cannot run in a browser: the console's bundle takes it as it is.
 */

/** What a snippet needs of a template. */
export interface SnippetTemplate {
  id: string;
  output: "pdf" | "png";
  sample_data: unknown;
}

/** The key in the code: written out (the public demo key), or read from an environment variable. */
export type SnippetKey = { literal: string } | { env: string };

/** A JSON value written as a Python literal (None, True, False; strings as JSON writes them). */
function pythonLiteral(value: unknown, indent: string): string {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value !== "object") return JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((item) => `${inner}${pythonLiteral(item, inner)},`).join("\n")}\n${indent}]`;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${pythonLiteral(item, inner)},`).join("\n")}\n${indent}}`;
}

/** JSON indented under a given prefix (for the JavaScript snippet). */
const indentedJson = (value: unknown, indent: string) => JSON.stringify(value, null, 2).replace(/\n/g, `\n${indent}`);

/** curl, the JS client and the Python client rendering a template with its sample data. */
export function snippets(template: SnippetTemplate, baseUrl: string, key: SnippetKey): { curl: string; javascript: string; python: string } {
  const isImage = template.output === "png";
  const fromEnv = "env" in key;
  const file = `${template.id}.${template.output}`;
  const body = JSON.stringify({ template_id: template.id, data: template.sample_data }, null, 2);
  return {
    curl: [
      `curl -s ${baseUrl}/v1/${isImage ? "image" : "render"} \\`,
      `  -H "Authorization: Bearer ${fromEnv ? `$${key.env}` : key.literal}" \\`,
      `  -H "Content-Type: application/json" \\`,
      `  -d @- <<'JSON'`,
      body,
      "JSON",
      `# {"id":"job_…","status":"succeeded","url":"${baseUrl}/v1/outputs/out_…?exp=…&sig=…", …}`,
    ].join("\n"),
    javascript: [
      `// ${template.id}.mjs, an ES module (it awaits at the top level): npm install @pressroom/client, then node ${template.id}.mjs`,
      'import { writeFile } from "node:fs/promises";',
      'import { Pressroom } from "@pressroom/client";',
      "",
      `const pressroom = new Pressroom({ apiKey: ${fromEnv ? `process.env.${key.env}` : `"${key.literal}"`}, baseUrl: "${baseUrl}" });`,
      `const result = await pressroom.${isImage ? "image" : "render"}({`,
      `  template_id: "${template.id}",`,
      `  data: ${indentedJson(template.sample_data, "  ")},`,
      "});",
      `await writeFile("${file}", await pressroom.download(result.url));`,
    ].join("\n"),
    python: [
      ...(fromEnv ? ["import os", ""] : []),
      "from pressroom import Pressroom",
      "",
      `client = Pressroom(api_key=${fromEnv ? `os.environ["${key.env}"]` : `"${key.literal}"`}, base_url="${baseUrl}")`,
      `result = client.${isImage ? "image" : "render"}(`,
      `    template_id="${template.id}",`,
      `    data=${pythonLiteral(template.sample_data, "    ")},`,
      ")",
      `with open("${file}", "wb") as f:`,
      "    f.write(client.download(result.url))",
    ].join("\n"),
  };
}
