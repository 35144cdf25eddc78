import { Readable } from "node:stream";
import { storageV1 } from "@pressroom/contracts";
import { AppError, fromGrpcError } from "@pressroom/platform";
import type { Context } from "koa";
import type { GatewayDeps } from "../deps";

const invalid = () => new AppError("URL_INVALID", "this download link is not valid", "Use the exact URL returned by the API; it must not be modified.");

const OUTPUT_ID = /^[a-z]{2,8}_[0-9a-z]{8,64}$/;
const FIRST_MESSAGE_MS = 15_000;

function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

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
 * Answers with an output's bytes, streamed from storage once it has checked
 * the signature (in constant time): status 200, its type, length and file
 * name. HEAD answers the headers only.
 */
export async function sendOutput(deps: GatewayDeps, ctx: Context, { outputId, exp, sig }: SignedOutput): Promise<void> {
  if (!OUTPUT_ID.test(outputId)) throw invalid();
  const stream = deps.clients.storage.getOutput({ outputId, exp, sig }, { deadline: Date.now() + 5 * 60_000 });
  const messages = stream[Symbol.asyncIterator]() as AsyncIterator<storageV1.GetOutputResponse>;
  let first: IteratorResult<storageV1.GetOutputResponse>;
  // The whole download may take minutes; the answer to the signature check may not.
  const firstTimeout = setTimeout(() => stream.cancel(), FIRST_MESSAGE_MS);
  try {
    first = await messages.next();
  } catch (err) {
    throw fromGrpcError(err);
  } finally {
    clearTimeout(firstTimeout);
  }
  const info = first.done ? undefined : first.value.info;
  if (!info) {
    stream.cancel();
    throw new AppError("INTERNAL_ERROR", "output stream without metadata", "Retry with exponential backoff.");
  }
  const remaining = Math.max(0, Math.floor((Date.parse(info.expiresAt) - Date.now()) / 1000));
  ctx.status = 200;
  ctx.type = info.contentType;
  ctx.length = Number(info.sizeBytes);
  ctx.set("Content-Disposition", contentDisposition(info.filename));
  ctx.set("Referrer-Policy", "no-referrer");
  ctx.set("Cache-Control", `private, max-age=${remaining}`);
  ctx.set("X-Content-Type-Options", "nosniff");
  if (ctx.method === "HEAD") {
    stream.cancel();
    return;
  }
  ctx.body = Readable.from(
    (async function* () {
      try {
        for (;;) {
          const next = await messages.next();
          if (next.done) return;
          if (next.value.chunk) yield next.value.chunk;
        }
      } finally {
        // The client went away (or the stream ended): stop storage's read.
        stream.cancel();
      }
    })(),
  );
}

/**
 * GET (and HEAD) /v1/outputs/<id>?exp&sig: authorised by the signature. The
 * query string never reaches a log line; telemetry scrubs sig from spans.
 */
export function outputHandler(deps: GatewayDeps) {
  return async (ctx: Context): Promise<void> => {
    const { exp, sig } = ctx.query;
    if (typeof exp !== "string" || typeof sig !== "string") throw invalid();
    await sendOutput(deps, ctx, { outputId: ctx.params.id as string, exp, sig });
  };
}
