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

/** Marks a key's output deleted (downloads answer 410 from then on); whether the key has that output. */
export async function markDeleted(db: Db, outputId: string, keyId: string): Promise<boolean> {
  const marked = await db
    .updateTable("outputs")
    .set((eb) => ({ deleted_at: eb.fn.coalesce("deleted_at", eb.val(new Date())) }))
    .where("output_id", "=", outputId)
    .where("key_id", "=", keyId)
    .returning("output_id")
    .executeTakeFirst();
  return marked !== undefined;
}

/** The key's outputs among `outputIds` that still live: stored, not deleted, not expired. */
export function findLiveOutputs(db: Db, keyId: string, outputIds: string[], now: Date): Promise<Pick<OutputRow, "output_id" | "expires_at">[]> {
  if (outputIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom("outputs")
    .select(["output_id", "expires_at"])
    .where("output_id", "in", outputIds)
    .where("key_id", "=", keyId)
    .where("deleted_at", "is", null)
    .where("expires_at", ">=", now)
    .execute();
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
