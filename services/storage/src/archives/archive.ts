import { once } from "node:events";
import { Readable } from "node:stream";
import archiver from "archiver";
import type { BatchArchive, BatchEnded } from "@pressroom/domain";
import { commitObject, findObject, newId, purgeObjectChunks, readObject, withSpan, writeObjectStream } from "@pressroom/platform";
import type { StorageDeps } from "../deps";
import { deleteOutput, insertOutput, type OutputRow } from "../outputs/outputs.repository";
import { signedUrl } from "../outputs/signing";
import { ArchiveNames } from "./names";

export type ArchiveDeps = Pick<StorageDeps, "db" | "bucket" | "logger" | "publicBaseUrl" | "signingSecret" | "ttlSeconds">;

/** A live output of a job (or of a batch: its archive), if any. */
function liveOutputOf(deps: ArchiveDeps, jobId: string): Promise<OutputRow | undefined> {
  return deps.db
    .selectFrom("outputs")
    .selectAll()
    .where("job_id", "=", jobId)
    .where("deleted_at", "is", null)
    .where("expires_at", ">", new Date())
    .orderBy("created_at", "desc")
    .executeTakeFirst();
}

function describe(deps: ArchiveDeps, row: OutputRow): BatchArchive {
  const exp = Math.floor(row.expires_at.getTime() / 1000);
  return {
    url: signedUrl(deps.publicBaseUrl, deps.signingSecret, row.output_id, exp),
    expires_at: row.expires_at.toISOString(),
    size_bytes: Number(row.size_bytes),
  };
}

/**
 * The zip of a batch's succeeded outputs, made once: an archive already made for the batch (an
 * output whose job_id is the batch id) is answered again. Streamed end to end, never whole in
 * memory: each output is read from the bucket chunk by chunk into the zip (stored, not
 * compressed again: PDFs and images are compressed already), and the zip is written to the
 * bucket chunk by chunk as it is made, then named and registered as an output (application/zip,
 * `<batch id>.zip`, attachment) with the outputs' lifetime. An item whose output is gone (expired)
 * is left out. Anything that fails removes the chunks written.
 */
export async function makeArchive(deps: ArchiveDeps, event: BatchEnded): Promise<BatchArchive> {
  const made = await liveOutputOf(deps, event.batch_id);
  if (made) return describe(deps, made);
  const { js, jsm, name: bucket } = deps.bucket;
  return withSpan("storage.archive", { attributes: { "pressroom.batch.items": event.items.length } }, async () => {
    const zip = archiver("zip", { store: true });
    const writing = writeObjectStream(js, bucket, zip);
    // Awaited below; a failure meanwhile (the zip's error) must not count as unhandled.
    writing.catch(() => undefined);
    const names = new ArchiveNames();
    try {
      for (const item of event.items) {
        const output = await liveOutputOf(deps, item.job_id);
        const object = output && (await findObject(jsm, bucket, output.output_id));
        if (!output || !object) {
          deps.logger.warn({ batchId: event.batch_id, jobId: item.job_id }, "a batch item's output is gone; left out of its archive");
          continue;
        }
        const entered = once(zip, "entry");
        zip.append(Readable.from(readObject(jsm, bucket, object), { objectMode: false }), {
          name: names.next(item, output.content_type),
          date: output.created_at,
        });
        await entered;
      }
      await zip.finalize();
    } catch (err) {
      zip.abort();
      await writing.then((written) => purgeObjectChunks(jsm, bucket, written.nuid)).catch(() => undefined);
      throw err;
    }
    const written = await writing;
    const outputId = newId("out");
    const expiresAt = new Date((Math.floor(Date.now() / 1000) + deps.ttlSeconds) * 1000);
    let rowInserted = false;
    try {
      await insertOutput(deps.db, {
        output_id: outputId,
        job_id: event.batch_id,
        key_id: event.key_id,
        content_type: "application/zip",
        filename: `${event.batch_id}.zip`,
        attachment: true,
        size_bytes: written.size,
        expires_at: expiresAt,
        deleted_at: null,
      });
      rowInserted = true;
      await commitObject(js, bucket, outputId, written);
    } catch (err) {
      await purgeObjectChunks(jsm, bucket, written.nuid).catch(() => undefined);
      if (rowInserted) await deleteOutput(deps.db, outputId);
      throw err;
    }
    return describe(deps, (await liveOutputOf(deps, event.batch_id))!);
  });
}
