import type { renderV1 } from "@pressroom/contracts";
import { AppError } from "@pressroom/platform";
import { outputTtlBeyondPlan } from "./jobs/option-parts";
import { validateJobRequest, type JobRequest } from "./jobs/request";

/**
 * An own template version's default options, which the templates feature checks when they are saved and the jobs feature
 * merges under a request's own: both with the schema and plan bounds of the request that renders the template. The request
 * wins field by field, and the merged options are checked again, so that no combination of the two is rendered unchecked.
 */

type Json = Record<string, unknown>;

/**
 * A template's default options checked as the options of a request that renders it: with the render route's schema for a pdf
 * template, the image route's for a png one (which refuses a url's viewport: the template sets the size), and within the plan's
 * output lifetime; a failure names options.<field>.
 */
export function templateOptionsProblem(t: { id: string; output: "pdf" | "png"; options?: Json }, plan: string): AppError | undefined {
  if (t.options === undefined) return undefined;
  const request = validateJobRequest(t.output === "png" ? "image" : "render", { template_id: t.id, data: {}, options: t.options });
  if (request instanceof AppError) return request;
  return outputTtlBeyondPlan(request.options?.outputTtlSeconds, plan);
}

const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

/** `over` on `base`: objects (margin, metadata, watermark, wait_for) merge per key, at every depth; anything else in `over` replaces. */
export function mergeOptions(base: Json, over: Json): Json {
  const merged: Json = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const under = merged[key];
    merged[key] = isObject(under) && isObject(value) ? mergeOptions(under, value) : value;
  }
  return merged;
}

/** The two ways of giving a PDF's paper size: a request that gives one replaces a template's default given the other way. */
const PAPER_SIZE_WAYS: readonly (readonly string[])[] = [["format"], ["width", "height"]];

/** The defaults without the paper size the request's options give the other way (a render's; an image's format is its file type). */
function withoutReplacedPaper(defaults: Json, options: Json): Json {
  const kept = { ...defaults };
  for (const way of PAPER_SIZE_WAYS) {
    if (!way.some((field) => field in options)) continue;
    for (const other of PAPER_SIZE_WAYS) if (other !== way) for (const field of other) delete kept[field];
  }
  return kept;
}

/** A template version's default options; {} when it has none (the public catalog's never have any). */
function defaultOptionsOf(template: Pick<renderV1.Template, "optionsJson">): Json {
  return template.optionsJson ? (JSON.parse(template.optionsJson) as Json) : {};
}

/**
 * The request `body` (of a render or image, checked already) with its template's default options merged under its own
 * options, parsed as a request again; undefined when the template has none. A render's paper size is one setting given
 * either way: the request's replaces the template's, format for width and height and the other way round. A merged result the request's checks or the
 * plan refuse is a 422 naming the option and saying that the template's defaults took part.
 */
export function withTemplateOptions(
  kind: "render" | "image",
  body: Json,
  template: Pick<renderV1.Template, "id" | "optionsJson">,
  plan: string,
): JobRequest | AppError | undefined {
  const defaults = defaultOptionsOf(template);
  if (Object.keys(defaults).length === 0) return undefined;
  const own = isObject(body.options) ? body.options : {};
  const options = mergeOptions(kind === "render" ? withoutReplacedPaper(defaults, own) : defaults, own);
  const request = validateJobRequest(kind, { ...body, options });
  const problem = request instanceof AppError ? request : outputTtlBeyondPlan(request.options?.outputTtlSeconds, plan);
  if (!problem) return request as JobRequest;
  return new AppError(
    problem.code,
    `${problem.message} (the request's options merged over template "${template.id}"'s default options)`,
    `${problem.hint} The template's default options are in GET /v1/templates/${template.id}: override the conflicting one in the request, or save a version with other defaults.`,
    problem.details,
  );
}
