import type { ApiError } from "../api";
import type { LineProblem } from "./codemirror";

/** Where an API problem with a template body belongs: one of the three editors at a line, or a field of the form. */
export type Placed = { editor: "html" | "schema" | "sample"; problem: LineProblem } | { field: string; message: string };

/** The line of JSON `text` where the property path `names` leads (each name looked for after the one before); 1 when it leads nowhere. */
function lineOfPath(text: string, names: string[]): number {
  let at = -1;
  for (const name of names.filter((n) => n && !/^\d+$/.test(n))) {
    const next = text.indexOf(`"${name}"`, at + 1);
    if (next < 0) break;
    at = next;
  }
  return at < 0 ? 1 : text.slice(0, at).split("\n").length;
}

/**
 * Places a 422 of POST/PUT /v1/templates: the source's compile error at its line and column
 * ("html: does not compile at line 3, column 7: …"), a problem of the data schema or the sample
 * data at the line of the property it names, anything else at its field.
 */
export function placeProblem(error: ApiError, texts: { schema: string; sample: string }): Placed {
  const [field = "", ...rest] = error.message.split(": ");
  const message = rest.join(": ") || error.message;
  const path = field.split(".");
  if (path[0] === "html") {
    const at = /line (\d+), column (\d+)/.exec(message);
    return { editor: "html", problem: { line: at ? Number(at[1]) : 1, ...(at ? { column: Number(at[2]) } : {}), message } };
  }
  if (path[0] === "data_schema") {
    // ajv names the schema's own path: "data_schema/properties/total/type must be …".
    const inSchema = /data_schema((?:\/[^\s/]+)+)/.exec(message)?.[1]?.split("/") ?? [];
    return { editor: "schema", problem: { line: lineOfPath(texts.schema, [...path.slice(1), ...inSchema]), message } };
  }
  if (path[0] === "sample_data") {
    const missing = /required property '([^']+)'/.exec(message)?.[1];
    return { editor: "sample", problem: { line: lineOfPath(texts.sample, [...path.slice(1), ...(missing ? [missing] : [])]), message } };
  }
  return { field: field || "form", message: error.message };
}
