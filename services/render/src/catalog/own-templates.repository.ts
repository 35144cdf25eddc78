import { AppError } from "@pressroom/platform";
import { templateNotFound } from "@pressroom/domain";
import { sql, type Insertable, type Kysely, type Transaction } from "kysely";
import type { RenderDb, TemplatesTable } from "../db";
import { findTemplate, type TemplateRow } from "./catalog.repository";

/** A version to store: the row's fields but its version, and its assets. */
export interface NewVersion {
  row: Omit<Insertable<TemplatesTable>, "version" | "owner" | "id">;
  assets: Map<string, Buffer>;
}

/** What saving may be refused for, checked before the preview is rendered and again, under the owner's lock, when the version is stored. */
export interface SaveRules {
  owner: string;
  id: string;
  replace: boolean;
  /** What the version makes: a new version keeps its template's. */
  output: "pdf" | "png";
  maxTemplates: number;
  plan: string;
}

export function templateExists(id: string, inCatalog: boolean): AppError {
  return inCatalog
    ? new AppError(
        "TEMPLATE_EXISTS",
        `template "${id}" is in the public catalog`,
        "Pick another id for your template: the catalog's templates are read-only (GET /v1/templates lists the ids in use).",
      )
    : new AppError("TEMPLATE_EXISTS", `template "${id}" already exists`, `Pick another id, or replace yours with PUT /v1/templates/${id}.`);
}

/** The answer for a change (PUT, DELETE) to a template of the public catalog. */
export function templateReadOnly(id: string): AppError {
  return new AppError(
    "TEMPLATE_READ_ONLY",
    `template "${id}" is in the public catalog and cannot be changed`,
    `The catalog's templates are read-only: to change one, create your own copy with POST /v1/templates under another id (GET /v1/templates/${id} shows its settings and schema).`,
  );
}

/** An id the caller has no live template of: read-only when the public catalog has it, else not found. */
async function notOwned(db: Kysely<RenderDb>, id: string): Promise<AppError> {
  return (await findTemplate(db, { owner: "", id })) ? templateReadOnly(id) : templateNotFound(id);
}

/** Refuses a save that may not happen; runs in the owner's lock when `db` is its transaction. */
export async function checkSave(db: Kysely<RenderDb>, rules: SaveRules): Promise<void> {
  const own = await findTemplate(db, { owner: rules.owner, id: rules.id });
  if (rules.replace) {
    if (!own) throw await notOwned(db, rules.id);
    // Renders and images name a template by id: a version that made the other kind would break every caller of the id.
    if (own.output !== rules.output) {
      throw new AppError(
        "PAYLOAD_INVALID",
        `output: template "${rules.id}" makes ${own.output === "pdf" ? "PDFs" : "PNG images"}; a new version cannot change its output to ${rules.output}`,
        `Keep "output": "${own.output}", or create a template with another id (POST /v1/templates) for ${rules.output}.`,
      );
    }
    return;
  }
  if (own) throw templateExists(rules.id, false);
  if (await findTemplate(db, { owner: "", id: rules.id })) throw templateExists(rules.id, true);
  const { count } = await db
    .selectFrom("templates")
    .select((eb) => eb.fn.count<string>("id").distinct().as("count"))
    .where("owner", "=", rules.owner)
    .where("deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  if (Number(count) >= rules.maxTemplates) {
    throw new AppError(
      "TEMPLATE_LIMIT_REACHED",
      `the ${rules.plan} plan stores at most ${rules.maxTemplates} templates`,
      `The ${rules.plan} plan's limit is ${rules.maxTemplates} templates: delete one with DELETE /v1/templates/<id>, or upgrade with POST /v1/billing/checkout.`,
    );
  }
}

function lockOwner(trx: Transaction<RenderDb>, owner: string) {
  return sql`select pg_advisory_xact_lock(hashtext(${`render.templates.owner:${owner}`}))`.execute(trx);
}

/**
 * Stores a new version of an own template with its assets: the next version
 * of its live generation, or version 1 of a new generation when it is created
 * (again, after a delete), so (owner, id, generation, version) names one content forever.
 */
export async function saveVersion(db: Kysely<RenderDb>, rules: SaveRules, version: NewVersion): Promise<TemplateRow> {
  return db.transaction().execute(async (trx) => {
    await lockOwner(trx, rules.owner);
    await checkSave(trx, rules);
    const last = await findTemplate(trx, { owner: rules.owner, id: rules.id, deleted: true });
    const next =
      last && last.deleted_at === null ? { generation: last.generation, version: last.version + 1 } : { generation: (last?.generation ?? 0) + 1, version: 1 };
    const row = await trx
      .insertInto("templates")
      .values({ ...version.row, owner: rules.owner, id: rules.id, ...next })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (version.assets.size > 0) {
      await trx
        .insertInto("template_assets")
        .values([...version.assets].map(([name, content]) => ({ owner: rules.owner, id: rules.id, ...next, name, content })))
        .execute();
    }
    return row;
  });
}

/**
 * The live versions (of the current generation) of the template an owner names by id, newest first: its own's,
 * else the public one's (as TemplateCatalog.find); NOT_FOUND when neither exists (or it was deleted).
 */
export async function listVersions(db: Kysely<RenderDb>, owner: string, id: string): Promise<Pick<TemplateRow, "version" | "created_at">[]> {
  for (const who of owner ? [owner, ""] : [""]) {
    const rows = await db
      .selectFrom("templates")
      .select(["version", "created_at"])
      .where("owner", "=", who)
      .where("id", "=", id)
      .where("deleted_at", "is", null)
      .orderBy("version", "desc")
      .execute();
    if (rows.length > 0) return rows;
  }
  throw templateNotFound(id);
}

/** Marks every version of an own template deleted; returns its last version. */
export async function deleteTemplate(db: Kysely<RenderDb>, owner: string, id: string): Promise<TemplateRow> {
  return db.transaction().execute(async (trx) => {
    await lockOwner(trx, owner);
    const current = await findTemplate(trx, { owner, id });
    if (!current) throw await notOwned(trx, id);
    await trx
      .updateTable("templates")
      .set({ deleted_at: new Date() })
      .where("owner", "=", owner)
      .where("id", "=", id)
      .where("deleted_at", "is", null)
      .execute();
    return current;
  });
}

/** The assets of one version, by name. */
export async function loadAssets(db: Kysely<RenderDb>, row: Pick<TemplateRow, "owner" | "id" | "generation" | "version">): Promise<Map<string, Buffer>> {
  const rows = await db
    .selectFrom("template_assets")
    .select(["name", "content"])
    .where("owner", "=", row.owner)
    .where("id", "=", row.id)
    .where("generation", "=", row.generation)
    .where("version", "=", row.version)
    .execute();
  return new Map(rows.map((row) => [row.name, row.content]));
}

/** The names and sizes of one version's files, by name (without reading them). */
export async function assetList(
  db: Kysely<RenderDb>,
  row: Pick<TemplateRow, "owner" | "id" | "generation" | "version">,
): Promise<{ name: string; size: number }[]> {
  const rows = await db
    .selectFrom("template_assets")
    .select(["name", sql<string>`octet_length(content)`.as("size")])
    .where("owner", "=", row.owner)
    .where("id", "=", row.id)
    .where("generation", "=", row.generation)
    .where("version", "=", row.version)
    .orderBy("name")
    .execute();
  return rows.map((r) => ({ name: r.name, size: Number(r.size) }));
}

/** One file of one version, or undefined when the version has none of that name. */
export async function loadAsset(
  db: Kysely<RenderDb>,
  row: Pick<TemplateRow, "owner" | "id" | "generation" | "version">,
  name: string,
): Promise<Buffer | undefined> {
  const found = await db
    .selectFrom("template_assets")
    .select("content")
    .where("owner", "=", row.owner)
    .where("id", "=", row.id)
    .where("generation", "=", row.generation)
    .where("version", "=", row.version)
    .where("name", "=", name)
    .executeTakeFirst();
  return found?.content;
}
