import type { Kysely } from "kysely";
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
 * nothing). Every version keeps its own, for GET /v1/templates/{id}/versions/{n}/preview.png
 * and the console's visual diff between two versions.
 */
export async function keepPreview(db: Kysely<RenderDb>, v: VersionKey, png: Buffer): Promise<void> {
  await db
    .insertInto("previews")
    .values({ owner: v.owner, id: v.id, generation: v.generation, version: v.version, png })
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Drops every preview of an own template (it was deleted). */
export async function dropPreviews(db: Kysely<RenderDb>, owner: string, id: string): Promise<void> {
  await db.deleteFrom("previews").where("owner", "=", owner).where("id", "=", id).execute();
}
