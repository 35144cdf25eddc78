import type { jobEventsV1 } from "@pressroom/contracts";
import type { ImageFormat } from "@pressroom/domain";
import { RenderFailure } from "../engine";

/**
 * What makes a job's document, behind one call: its source (a template, raw
 * HTML, a url, or documents merged), the engine, and the post-processing its
 * options ask for. The worker delivers (the queue, the job's events, retries,
 * storage) and knows nothing of how a document is made; a producer knows
 * nothing of the queue.
 */
export interface DocumentProducer {
  /**
   * Makes the job's document within the render deadline. Rejects with a RenderFailure
   * (its `reason` says whose fault: see RenderFailure) or an AppError RENDER_FAILED (the
   * template's fault) for what the document did, anything else for what failed on our
   * side, or with `signal.reason` once the signal aborts.
   */
  produce(job: DocumentJob, signal: AbortSignal): Promise<ProducedDocument>;
}

/** One job's document, as admitted. */
export interface DocumentJob {
  jobId: string;
  /** The API key whose windows it renders in, and whose fault a document fault is. */
  keyId: string;
  /** The request: its source (template_id, html, url or documents), data and options. */
  request: jobEventsV1.JobAccepted;
}

/** The output label of what was made: pdf, or the image's own format. */
export type OutputFormat = "pdf" | ImageFormat;

export interface ProducedDocument {
  data: Uint8Array;
  contentType: "application/pdf" | `image/${ImageFormat}`;
  format: OutputFormat;
  pages: number;
  /** From the job's start to its bytes: expansion, render(s), merge, post-processing. */
  renderMs: number;
  /** Its download name, with its extension. */
  filename: string;
  /** Whether downloads answer Content-Disposition: attachment (the request named it). */
  attachment: boolean;
  /** The first lines of the uncaught exceptions of the document's script, when it rendered anyway (a part's prefixed documents[i]). */
  scriptErrors: string[];
  /**
   * Says the caller is done with the document (stored, announced): what the producer held
   * for it meanwhile (the page it was rendered on, kept from its reset) may go. Call it once.
   */
  release(): void;
}

export { RenderFailure };
