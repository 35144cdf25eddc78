import type { Insertable, Kysely, Selectable } from "kysely";
import type { OutputsTable, StorageDb } from "../db";

type Db = Kysely<StorageDb>;
export type OutputRow = Selectable<OutputsTable>;

/** Claims an output id: fails on the primary key when the id is taken. */
export async function insertOutput(db: Db, row: Insertable<OutputsTable>): Promise<void> {
  await db.insertInto("outputs").values(row).execute();
}

export async function deleteOutput(db: Db, outputId: string): Promise<void> {
  await db.deleteFrom("outputs").where("output_id", "=", outputId).execute();
}

export function findOutput(db: Db, outputId: string): Promise<OutputRow | undefined> {
  return db.selectFrom("outputs").selectAll().where("output_id", "=", outputId).executeTakeFirst();
}

/**
 * Claims up to `batch` outputs past their expiry by marking them deleted, in
 * one statement: SKIP LOCKED, so replicas sweeping at the same time take
 * different rows. Returns their ids.
 */
export async function claimExpired(db: Db, now: Date, batch: number): Promise<string[]> {
  const claimed = await db
    .updateTable("outputs")
    .set({ deleted_at: now })
    .where("output_id", "in", (eb) =>
      eb.selectFrom("outputs").select("output_id").where("deleted_at", "is", null).where("expires_at", "<", now).limit(batch).forUpdate().skipLocked(),
    )
    .returning("output_id")
    .execute();
  return claimed.map((row) => row.output_id);
}
