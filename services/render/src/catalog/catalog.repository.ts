import { sql, type Kysely, type Selectable } from "kysely";
import type { RenderDb, TemplatesTable } from "../db";
import type { BuiltinTemplate } from "./builtin-loader";

export type TemplateRow = Selectable<TemplatesTable>;

/**
 * Makes the catalog hold every built-in template: a template whose content
 * changed gets a new version; earlier versions stay for jobs that name them.
 * Serialised with an advisory lock so replicas starting together agree.
 */
export async function syncBuiltins(db: Kysely<RenderDb>, builtins: BuiltinTemplate[]): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('render.templates.sync'))`.execute(trx);
    const added: string[] = [];
    for (const t of builtins) {
      const latest = await trx
        .selectFrom("templates")
        .select(["version", "content_hash"])
        .where("owner", "=", "")
        .where("id", "=", t.id)
        .orderBy("version", "desc")
        .limit(1)
        .executeTakeFirst();
      if (latest?.content_hash === t.contentHash) continue;
      const version = (latest?.version ?? 0) + 1;
      await trx
        .insertInto("templates")
        .values({
          id: t.id,
          version,
          name: t.name,
          description: t.description,
          output: t.output,
          page: t.page ? JSON.stringify(t.page) : null,
          image: t.image ? JSON.stringify(t.image) : null,
          settings: JSON.stringify(t.settings),
          data_schema: JSON.stringify(t.dataSchema),
          sample_data: JSON.stringify(t.sampleData),
          body: t.body,
          content_hash: t.contentHash,
        })
        .execute();
      added.push(`${t.id}@${version}`);
    }
    return added;
  });
}

/**
 * The current version of every template the owner sees: the public catalog's and, with an owner, its own live ones (of their current
 * generation); a public template whose id the owner uses for its own (a built-in added later) is left out for that owner.
 */
export async function listLatest(db: Kysely<RenderDb>, owner = ""): Promise<TemplateRow[]> {
  return db
    .selectFrom("templates as t")
    .selectAll()
    .where("t.owner", "in", owner ? ["", owner] : [""])
    .where("t.deleted_at", "is", null)
    .where(({ eb, or, not, exists, selectFrom }) =>
      or([
        eb("t.owner", "<>", ""),
        not(
          exists(
            selectFrom("templates as o")
              .select("o.id")
              .whereRef("o.id", "=", "t.id")
              .where("o.owner", "=", owner)
              .where("o.owner", "<>", "")
              .where("o.deleted_at", "is", null),
          ),
        ),
      ]),
    )
    .where(({ eb, selectFrom }) =>
      eb(
        "t.version",
        "=",
        selectFrom("templates as v")
          .select((v) => v.fn.max("v.version").as("max"))
          .whereRef("v.owner", "=", "t.owner")
          .whereRef("v.id", "=", "t.id")
          .where("v.deleted_at", "is", null),
      ),
    )
    .orderBy("t.id")
    .orderBy("t.owner")
    .execute();
}

/**
 * One template of one owner: the given version, or the current one; of the
 * given generation, or the latest. A deleted template's versions are found
 * only with `deleted` (the worker renders the version a job was admitted with).
 */
export async function findTemplate(
  db: Kysely<RenderDb>,
  where: { owner: string; id: string; generation?: number; version?: number; deleted?: boolean },
): Promise<TemplateRow | undefined> {
  let query = db.selectFrom("templates").selectAll().where("owner", "=", where.owner).where("id", "=", where.id);
  if (!where.deleted) query = query.where("deleted_at", "is", null);
  if (where.generation) query = query.where("generation", "=", where.generation);
  if (where.version) query = query.where("version", "=", where.version);
  return query.orderBy("generation", "desc").orderBy("version", "desc").limit(1).executeTakeFirst();
}
