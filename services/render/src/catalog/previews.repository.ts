import { sql, type Kysely } from "kysely";
import type { RenderDb } from "../db";
import type { TemplateRow } from "./catalog.repository";

type VersionKey = Pick<TemplateRow, "owner" | "id" | "generation" | "version">;

/** The stored preview of one template version, or undefined. */
export async function findPreview(db: Kysely<RenderDb>, v: VersionKey): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom("previews")
    .select("png")
    .where("owner", "=", v.owner)
    .where("id", "=", v.id)
    .where("generation", "=", v.generation)
    .where("version", "=", v.version)
    .executeTakeFirst();
  return row?.png;
}

/**
 * Stores a version's preview (a second one rendered meanwhile, on another replica, changes
 * nothing) and drops the template's earlier versions' (only the current one is ever served).
 */
export async function keepPreview(db: Kysely<RenderDb>, v: VersionKey, png: Buffer): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto("previews")
      .values({ owner: v.owner, id: v.id, generation: v.generation, version: v.version, png })
      .onConflict((oc) => oc.doNothing())
      .execute();
    await trx
      .deleteFrom("previews")
      .where("owner", "=", v.owner)
      .where("id", "=", v.id)
      .where(sql<boolean>`(generation, version) < (${v.generation}, ${v.version})`)
      .execute();
  });
}

/** Drops every preview of an own template (it was deleted). */
export async function dropPreviews(db: Kysely<RenderDb>, owner: string, id: string): Promise<void> {
  await db.deleteFrom("previews").where("owner", "=", owner).where("id", "=", id).execute();
}
