import type { Context } from "koa";
import { invalid, sendOutput, type OutputSource } from "../output-delivery";

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
