import type { renderV1 } from "@pressroom/contracts";
import { AppError } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { RenderDb } from "../db";
import { RenderFailure } from "../engine";
import { templateKey } from "./catalog";
import type { TemplateRow } from "./catalog.repository";
import type { PreviewQueue } from "./preview-queue";
import { findPreview, keepPreview } from "./previews.repository";

const PREVIEW_HINT = "Fix the template so that it renders its sample_data (scripts, size, page count), then save it again.";

/** Renders the preview of a stored version (its sample data, its assets), stopping when `signal` aborts. */
export type RenderStored = (row: TemplateRow, signal: AbortSignal) => Promise<Buffer>;

/** A failure of the document's own (RENDER_FAILED, naming what it hit), or ours as it was. */
function previewFailure(err: unknown): unknown {
  const documents = (err instanceof RenderFailure && !err.retryable) || (err instanceof AppError && err.code === "RENDER_FAILED");
  return documents ? new AppError("RENDER_FAILED", `the preview failed: ${(err as Error).message}`, PREVIEW_HINT) : err;
}

/**
 * Templates' previews: each rendered once per version and stored (previews.repository.ts), so a
 * read that finds it renders nothing on any replica. Every render goes through this process's
 * bounded preview queue with its caller's signal. The public catalog's preview is rendered by
 * render itself on the first read that finds none stored (once per version and replica, whoever
 * reads, and never more); an own template's only for a caller that admitted it (`render`).
 */
export class Previews {
  /** Public previews being rendered now, by version: every read of one waits for the same render. */
  private readonly publicRenders = new Map<string, Promise<Buffer>>();

  constructor(private readonly deps: { db: Kysely<RenderDb>; queue: PreviewQueue; renderStored: RenderStored }) {}

  /** GetPreview of the template version `latest` (the current one, or the one asked for). */
  async read(latest: TemplateRow, render: boolean, signal: AbortSignal): Promise<renderV1.GetPreviewResponse> {
    const answer = (png: Buffer, rendered = false) => ({ png, version: latest.version, rendered, absent: false });
    const stored = await findPreview(this.deps.db, latest);
    if (stored) return answer(stored);
    if (!latest.owner) return answer(await this.renderPublic(latest));
    if (!render) return { png: Buffer.alloc(0), version: latest.version, rendered: false, absent: true };
    const png = await this.run(signal, (inQueue) => this.deps.renderStored(latest, inQueue));
    await keepPreview(this.deps.db, latest, png);
    return answer(png, true);
  }

  /** Runs one preview's render in the queue (a caller that goes away while it waits leaves it); a failure is the document's or ours. */
  run(signal: AbortSignal, render: (signal: AbortSignal) => Promise<Buffer>): Promise<Buffer> {
    return this.deps.queue
      .run(() => render(signal), signal)
      .catch((err: unknown) => {
        throw previewFailure(err);
      });
  }

  /** Stores a version's preview (a save's, rendered before the version was). */
  keep(row: TemplateRow, png: Buffer): Promise<void> {
    return keepPreview(this.deps.db, row, png);
  }

  private renderPublic(latest: TemplateRow): Promise<Buffer> {
    const key = templateKey(latest);
    let rendering = this.publicRenders.get(key);
    if (!rendering) {
      // Shared by every reader: no one reader's going away stops it; its deadline does.
      rendering = this.run(new AbortController().signal, (signal) => this.deps.renderStored(latest, signal)).then(async (png) => {
        await keepPreview(this.deps.db, latest, png);
        return png;
      });
      const done = rendering.finally(() => this.publicRenders.delete(key));
      done.catch(() => undefined);
      this.publicRenders.set(key, rendering);
    }
    return rendering;
  }
}
