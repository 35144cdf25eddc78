import { timingSafeEqual } from "node:crypto";
import { Readable } from "node:stream";
import { storageV1 } from "@pressroom/contracts";
import { AppError, fromGrpcError, meter } from "@pressroom/platform";
import { type JobOutcome, type RecentOutputInfo, type RecentOutputs } from "@pressroom/domain";
import type { Context } from "koa";

/**
 * Delivering rendered outputs, shared by the signed download (outputs/) and
 * the sync answer that carries the document itself (jobs/): the outputs
 * announced to this replica with their job's end, and the stream from storage.
 */

const served = meter().createCounter("pressroom.gateway.outputs.served", {
  unit: "{output}",
  description: "Outputs answered (downloads and document answers), from those announced to this replica with their job's end or from storage.",
});

const outputMetrics = {
  served(source: "announced" | "storage"): void {
    served.add(1, { source });
  },
};

export const invalid = () => new AppError("URL_INVALID", "this download link is not valid", "Use the exact URL returned by the API; it must not be modified.");

const OUTPUT_ID = /^[a-z]{2,8}_[0-9a-z]{8,64}$/;
/** Whether `id` has an output id's shape (out_…). */
export const isOutputId = (id: string): boolean => OUTPUT_ID.test(id);
const FIRST_MESSAGE_MS = 15_000;

export function contentDisposition(filename: string, attachment: boolean): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${attachment ? "attachment" : "inline"}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** An announced output the gateway keeps: what a download answers, and the signature storage gave its URL. */
export interface KeptOutputInfo extends RecentOutputInfo {
  exp: string;
  sig: string;
}

/** Where an output's bytes come from: this replica's announced outputs, else storage, which checks every download. */
export interface OutputSource {
  storage: storageV1.StorageServiceClient;
  /** Outputs announced with their job's end, by output id. */
  recentOutputs: RecentOutputs<KeptOutputInfo>;
}

/** Outputs larger than this are not kept (render announces up to 512 KiB by default). */
export const KEPT_OUTPUT_MAX_BYTES = 8 * 1024 * 1024;

/** The parts of a signed output URL: the output's id and its signature. */
export interface SignedOutput {
  outputId: string;
  exp: string;
  sig: string;
}

/** The id and signature of a signed output URL as storage issued it, or undefined. */
export function signedOutputOf(url: string): SignedOutput | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url, "http://pressroom.invalid");
  } catch {
    return undefined;
  }
  const outputId = /^\/v1\/outputs\/([^/]+)$/.exec(parsed.pathname)?.[1];
  const exp = parsed.searchParams.get("exp");
  const sig = parsed.searchParams.get("sig");
  return outputId && exp && sig ? { outputId, exp, sig } : undefined;
}

/**
 * Keeps the output a succeeded job's announcement carried, under its id: the
 * document answer and the URL's first downloads are served from it, once
 * storage has checked each one (sendOutput). Render alone may announce
 * outcomes (NATS permissions), after storage stored the output under that URL.
 */
export function keepAnnouncedOutput(deps: Pick<OutputSource, "recentOutputs">, job: JobOutcome): void {
  const { result, output } = job;
  const signed = result && output ? signedOutputOf(result.url) : undefined;
  if (!result || !output || !signed || output.data.byteLength !== Number(result.sizeBytes)) return;
  const info = {
    contentType: result.contentType,
    filename: output.filename,
    attachment: output.attachment,
    expiresAt: new Date(result.expiresAt),
    exp: signed.exp,
    sig: signed.sig,
  };
  deps.recentOutputs.add(signed.outputId, { info, bytes: Buffer.from(output.data.buffer, output.data.byteOffset, output.data.byteLength) });
}

/** Whether a download's signature is, byte for byte, the one storage gave the kept output (compared in constant time). */
function sameSignature(info: KeptOutputInfo, exp: string, sig: string): boolean {
  const given = Buffer.from(sig);
  const kept = Buffer.from(info.sig);
  return exp === info.exp && given.length === kept.length && timingSafeEqual(given, kept);
}

/** The bytes a download asks for: from `start` to `end`, both included. */
export interface ByteRange {
  start: number;
  end: number;
}

const unsatisfiable = (size: number) =>
  new AppError(
    "RANGE_NOT_SATISFIABLE",
    `the Range asked for starts past the output's ${size} bytes`,
    "Ask for bytes within the output's size (Content-Length), or leave Range out.",
  );

/**
 * The one range of a `Range: bytes=…` header within an output of `size` bytes (RFC 9110 §14):
 * `a-b`, `a-` or the suffix `-n`, the end clamped to the size. Undefined when the whole output is
 * to be answered: no header, another unit, several ranges, a malformed one, or `If-Range` (outputs
 * carry no validator it could match), or a method other than GET (the document answer of a POST
 * is whole). A range starting past the end is 416 RANGE_NOT_SATISFIABLE.
 */
export function requestedRange(ctx: Context, size: number): ByteRange | undefined {
  const header = ctx.get("range");
  if (!header || ctx.method !== "GET" || ctx.get("if-range")) return undefined;
  const match = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) throw unsatisfiable(size);
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Number(match[2]);
  if (match[2] !== "" && end < start) return undefined;
  if (start >= size) throw unsatisfiable(size);
  return { start, end: Math.min(end, size - 1) };
}

/**
 * The headers of an output's answer: its type, length, file name, and caching until it expires;
 * 206 with Content-Range for a range, else 200. A download (GET, HEAD) says it takes ranges.
 */
function answerOutput(
  ctx: Context,
  info: { contentType: string; filename: string; attachment: boolean; expiresAt: Date },
  size: number,
  range: ByteRange | undefined,
): void {
  const remaining = Math.max(0, Math.floor((info.expiresAt.getTime() - Date.now()) / 1000));
  ctx.status = range ? 206 : 200;
  ctx.type = info.contentType;
  ctx.length = range ? range.end - range.start + 1 : size;
  if (ctx.method === "GET" || ctx.method === "HEAD") ctx.set("Accept-Ranges", "bytes");
  if (range) ctx.set("Content-Range", `bytes ${range.start}-${range.end}/${size}`);
  ctx.set("Content-Disposition", contentDisposition(info.filename, info.attachment));
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.set("Cache-Control", `private, max-age=${remaining}`);
  ctx.set("X-Content-Type-Options", "nosniff");
}

/**
 * Answers with an output's bytes once storage has checked the URL (its signature, in constant
 * time, and that the output still lives: another replica may have deleted it): those announced
 * to this replica when it holds them (storage then answers the info only), else streamed from
 * storage. While storage cannot be reached, the URL storage signed for an output announced here
 * is still served from here (a delete made through another replica meanwhile is seen once
 * storage answers again); any other URL is not. HEAD answers the headers only.
 */
export async function sendOutput(deps: OutputSource, ctx: Context, { outputId, exp, sig }: SignedOutput): Promise<void> {
  if (!OUTPUT_ID.test(outputId)) throw invalid();
  const kept = deps.recentOutputs.get(outputId);
  const stream = deps.storage.getOutput({ outputId, exp, sig, infoOnly: kept !== undefined || ctx.method === "HEAD" }, { deadline: Date.now() + 5 * 60_000 });
  const messages = stream[Symbol.asyncIterator]() as AsyncIterator<storageV1.GetOutputResponse>;
  let info: storageV1.OutputInfo | undefined;
  // The whole download may take minutes; the answer to the signature check may not.
  const firstTimeout = setTimeout(() => stream.cancel(), FIRST_MESSAGE_MS);
  try {
    const first = await messages.next();
    info = first.done ? undefined : first.value.info;
  } catch (err) {
    const failure = fromGrpcError(err);
    if (!kept || failure.code !== "UNAVAILABLE" || !sameSignature(kept.info, exp, sig)) throw failure;
    const { contentType, filename, attachment, expiresAt } = kept.info;
    info = { contentType, filename, attachment, sizeBytes: String(kept.bytes.length), expiresAt: expiresAt.toISOString() };
  } finally {
    clearTimeout(firstTimeout);
  }
  if (!info) {
    stream.cancel();
    throw new AppError("INTERNAL_ERROR", "output stream without metadata", "Retry with exponential backoff.");
  }
  const size = kept ? kept.bytes.length : Number(info.sizeBytes);
  outputMetrics.served(kept ? "announced" : "storage");
  let range: ByteRange | undefined;
  try {
    range = requestedRange(ctx, size);
  } catch (err) {
    stream.cancel();
    throw err;
  }
  answerOutput(ctx, { contentType: info.contentType, filename: info.filename, attachment: info.attachment, expiresAt: new Date(info.expiresAt) }, size, range);
  if (kept || ctx.method === "HEAD") {
    stream.cancel();
    if (kept && ctx.method !== "HEAD") ctx.body = range ? kept.bytes.subarray(range.start, range.end + 1) : kept.bytes;
    return;
  }
  const { start, end } = range ?? { start: 0, end: size - 1 };
  ctx.body = Readable.from(
    (async function* () {
      try {
        // The stream's offset of the next chunk: chunks before the range are skipped, the one past it ends the answer.
        let offset = 0;
        while (offset <= end) {
          const next = await messages.next();
          if (next.done) return;
          const chunk = next.value.chunk;
          if (!chunk || chunk.length === 0) continue;
          const from = Math.max(0, start - offset);
          const to = Math.min(chunk.length, end + 1 - offset);
          if (from < to) yield from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to);
          offset += chunk.length;
        }
      } finally {
        // The client went away (or the stream ended): stop storage's read.
        stream.cancel();
      }
    })(),
  );
}
