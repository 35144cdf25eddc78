import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import type { ImageJson, PageJson, TemplateSettingsJson } from "../db";

export interface BuiltinTemplate {
  id: string;
  name: string;
  description: string;
  output: "pdf" | "png";
  page: PageJson | null;
  image: ImageJson | null;
  settings: TemplateSettingsJson;
  dataSchema: Record<string, unknown>;
  sampleData: Record<string, unknown>;
  body: string;
  contentHash: string;
}

interface Manifest {
  id: string;
  name: string;
  description: string;
  output: "pdf" | "png";
  page?: PageJson;
  image?: ImageJson;
  settings?: TemplateSettingsJson;
  data_schema: Record<string, unknown>;
  sample_data: Record<string, unknown>;
}

export const BUILTIN_DIR = path.join(__dirname, "builtin");

/** Reads the built-in templates shipped with the service (one folder each). */
export function loadBuiltinTemplates(dir = BUILTIN_DIR): BuiltinTemplate[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, "manifest.json")))
    .map((entry) => {
      const manifestText = readFileSync(path.join(dir, entry.name, "manifest.json"), "utf8");
      const body = readFileSync(path.join(dir, entry.name, "template.hbs"), "utf8");
      const manifest = JSON.parse(manifestText) as Manifest;
      if (manifest.id !== entry.name) throw new Error(`template folder ${entry.name} declares id ${manifest.id}`);
      return {
        id: manifest.id,
        name: manifest.name,
        description: manifest.description,
        output: manifest.output,
        page: manifest.page ?? null,
        image: manifest.image ?? null,
        settings: manifest.settings ?? {},
        dataSchema: manifest.data_schema,
        sampleData: manifest.sample_data,
        body,
        contentHash: createHash("sha256").update(manifestText).update("\0").update(body).digest("hex"),
      };
    })
    .sort((a, b) => a.id.localeCompare(b.id));
}
