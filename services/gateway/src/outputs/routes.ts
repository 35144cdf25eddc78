import { AppError, call } from "@pressroom/platform";
import type { Context } from "koa";
import { keyed, type KeyedDeps } from "../access/admission";
import { invalid, isOutputId, sendOutput, type OutputSource } from "../output-delivery";

/**
 * GET (and HEAD) /v1/outputs/<id>?exp&sig: authorised by the signature. The
 * query string never reaches a log line; telemetry scrubs sig from spans.
 */
export function outputHandler(deps: OutputSource) {
  return async (ctx: Context): Promise<void> => {
    const { exp, sig } = ctx.query;
    if (typeof exp !== "string" || typeof sig !== "string") throw invalid();
    await sendOutput(deps, ctx, { outputId: ctx.params.id as string, exp, sig });
  };
}

/**
 * DELETE /v1/outputs/<id> with the key that rendered it: storage removes it (row and bytes; every
 * replica's downloads check its row), and this replica forgets the bytes it was announced.
 */
export function deleteOutputHandler(deps: OutputSource & KeyedDeps) {
  return async (ctx: Context): Promise<void> => {
    const principal = await keyed(deps, ctx);
    const outputId = ctx.params.id as string;
    if (!isOutputId(outputId)) {
      throw new AppError("NOT_FOUND", `output "${outputId}" not found`, "Use the id in the output's URL (/v1/outputs/{id}), with the key that rendered it.");
    }
    await call(deps.storage, deps.storage.deleteOutput, { outputId, keyId: principal.keyId });
    deps.recentOutputs.delete(outputId);
    ctx.status = 204;
  };
}
