import type { Kysely } from "kysely";

/** Whether downloads answer Content-Disposition: attachment (the request named the file) rather than inline. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("outputs")
    .addColumn("attachment", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("outputs").dropColumn("attachment").execute();
}
