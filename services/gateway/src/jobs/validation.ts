import { AppError, TEMPLATE_ID_PATTERN, webhookUrlProblem } from "@pressroom/platform";
import { errors } from "../http/errors";

export const MAX_HTML_BYTES = 524_288;
export const MAX_DATA_BYTES = 262_144;

export type JobKind = "render" | "image";

export interface JobRequest {
  kind: JobKind;
  templateId?: string;
  html?: string;
  data: Record<string, unknown>;
  dataJson: string;
  webhookUrl?: string;
}

const FIELDS: Record<JobKind, readonly string[]> = {
  render: ["template_id", "html", "data", "webhook_url"],
  image: ["template_id", "data", "webhook_url"],
};

/**
 * Validates the body of POST /v1/render or /v1/image. Returns the parsed
 * request, or the 422 error to answer with once rate limiting has been
 * applied (the spec's check order puts the rate limit before the body).
 */
export function validateJobRequest(kind: JobKind, body: Record<string, unknown>): JobRequest | AppError {
  const unknown = Object.keys(body).filter((field) => !FIELDS[kind].includes(field));
  if (unknown.length) {
    return errors.payload(`unknown field${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`, `Send only ${FIELDS[kind].join(", ")}.`);
  }
  const { template_id: templateId, html, data, webhook_url: webhookUrl } = body;
  if (kind === "image" && templateId === undefined) {
    return errors.payload("template_id: required", "Image requests name a png template; see GET /v1/templates.");
  }
  if (kind === "render" && (templateId === undefined) === (html === undefined)) {
    return errors.payload("exactly one of template_id or html is required", "Send either template_id or html, not both.");
  }
  if (templateId !== undefined) {
    if (typeof templateId !== "string" || !TEMPLATE_ID_PATTERN.test(templateId)) {
      return errors.payload(`template_id: must match ${TEMPLATE_ID_PATTERN.source}`, "Use an id from GET /v1/templates.");
    }
  }
  if (html !== undefined) {
    if (typeof html !== "string") return errors.payload("html: must be a string");
    const bytes = Buffer.byteLength(html, "utf8");
    if (bytes > MAX_HTML_BYTES) {
      const limit = `html: ${bytes} bytes is over the limit of ${MAX_HTML_BYTES} bytes (512 KB)`;
      return errors.payload(limit, "Send a smaller document, or store it as a template.");
    }
    if (html.trim() === "") return errors.payload("html: must not be empty");
  }
  if (data === undefined) return errors.payload("data: required", 'Send a data object, e.g. "data": {} when the template needs none.');
  if (typeof data !== "object" || data === null || Array.isArray(data)) return errors.payload("data: must be a JSON object");
  const dataJson = JSON.stringify(data);
  if (Buffer.byteLength(dataJson, "utf8") > MAX_DATA_BYTES) return errors.payload(`data: must be at most ${MAX_DATA_BYTES} bytes as JSON`);
  if (webhookUrl !== undefined) {
    const problem = webhookUrlProblem(webhookUrl);
    if (problem) return errors.payload(problem, "Use an absolute https:// URL on the default port, without credentials, at most 2,048 characters.");
  }
  return {
    kind,
    templateId: templateId as string | undefined,
    html: html as string | undefined,
    data: data as Record<string, unknown>,
    dataJson,
    webhookUrl: webhookUrl as string | undefined,
  };
}
