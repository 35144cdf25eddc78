import { Script } from "node:vm";
import { z } from "@pressroom/platform";

/** options.wait_for: when a page is ready to print. */

export const MAX_DELAY_MS = 10_000;
const waitText = (max: number, description: string) =>
  z.string({ error: "must be a string" }).min(1, "must not be empty").max(max, `must be at most ${max} characters`).meta({ description });

const MAX_WAIT_TIMEOUT_MS = 60_000;
const WAIT_CONDITIONS = ["selector", "expression", "network_idle", "delay_ms"] as const;

/** An expression that is not JavaScript: what the page's engine would throw when evaluating it, or undefined. Compiled here, never run. */
function expressionSyntaxError(expression: string): string | undefined {
  try {
    new Script(expression);
    return undefined;
  } catch (err) {
    return err instanceof SyntaxError ? `${err.name}: ${err.message}` : undefined;
  }
}

export const WaitFor = z
  .strictObject({
    selector: waitText(1_000, "Wait until an element matches this CSS selector.").optional(),
    expression: waitText(
      10_000,
      "Wait until this JavaScript expression is truthy (evaluated in the page, polled). One that is not valid JavaScript is refused (422 PAYLOAD_INVALID); " +
        "one that throws when evaluated fails the job at once (422 RENDER_FAILED naming the error): to wait for something not yet defined, " +
        "write e.g. window.app && window.app.ready.",
    )
      .check((ctx) => {
        const problem = expressionSyntaxError(ctx.value);
        if (problem) ctx.issues.push({ code: "custom", message: `is not valid JavaScript (${problem})`, input: ctx.value });
      })
      .optional(),
    network_idle: z.literal(true, { error: "must be true" }).optional().meta({ description: "Wait until no sub-request has been in flight for 500 ms." }),
    delay_ms: z
      .int({ error: `must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}` })
      .min(0, `must be from 0 to ${MAX_DELAY_MS}`)
      .max(MAX_DELAY_MS, `must be from 0 to ${MAX_DELAY_MS}`)
      .optional()
      .meta({ description: `Wait this many milliseconds after the page loaded (at most ${MAX_DELAY_MS}).` }),
    timeout_ms: z
      .int({ error: `must be a whole number of milliseconds from 1 to ${MAX_WAIT_TIMEOUT_MS}` })
      .min(1, `must be from 1 to ${MAX_WAIT_TIMEOUT_MS}`)
      .max(MAX_WAIT_TIMEOUT_MS, `must be from 1 to ${MAX_WAIT_TIMEOUT_MS}`)
      .optional()
      .meta({
        description:
          "With selector, expression or network_idle: the longest to wait, in milliseconds, before the job fails with RENDER_FAILED " +
          "(default: as long as the render deadline leaves; the deadline still bounds it).",
      }),
  })
  .refine(
    (wait) => WAIT_CONDITIONS.filter((condition) => wait[condition] !== undefined).length === 1,
    "must name exactly one condition: selector, expression, network_idle or delay_ms",
  )
  .refine((wait) => wait.timeout_ms === undefined || wait.delay_ms === undefined, {
    message: "timeout_ms bounds a selector, an expression or network_idle, not delay_ms",
    path: ["timeout_ms"],
  })
  .meta({
    id: "WaitFor",
    description:
      "When the page is ready to print, after it loaded: exactly one condition (and for selector, expression or network_idle, timeout_ms). " +
      "Bounded by the render deadline; a condition that is not met in time fails the job with 422 RENDER_FAILED naming it.",
  });
