import { randomUUID } from "node:crypto";
import type { Batch, BatchItemList, BatchItemsQuery, BatchRequest } from "./batches";
import { makeTransport, requestBinary, requestBytes, requestDocument, requestJson, type Method, type Transport } from "./http";
import { PressroomError } from "./errors";
import type { PressroomOptions, RequestOptions, SignupOptions, WaitOptions } from "./options";
import {
  queryString,
  type DailyUsage,
  type DailyUsageQuery,
  type Delivery,
  type DeliveryList,
  type DeliveryListQuery,
  type JobList,
  type JobListQuery,
} from "./lists";
import type {
  CheckoutRequest,
  CheckoutResponse,
  ImageRequest,
  ImageResponse,
  JobQueued,
  JobView,
  RenderedDocument,
  RenderRequest,
  RenderResponse,
  RotatedKeyResponse,
  ScreenshotRequest,
  SignupResponse,
  RotatedWebhookSecretResponse,
  UsageResponse,
  WebhookSecretResponse,
} from "./types";
import type { Template, TemplateInput, TemplatesResponse, TemplateVersionsResponse } from "./templates";

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The Pressroom API client. Every method resolves with the JSON answer and
 * rejects with `PressroomError` (code, status, message, hint, retryAfter) on
 * a non-2xx answer.
 */
export class Pressroom {
  readonly baseUrl: string;
  /** Private so the key never shows up when the client is logged or serialized. */
  readonly #apiKey: string;
  readonly #transport: Transport;

  constructor(options: PressroomOptions) {
    if (typeof options?.apiKey !== "string" || options.apiKey.trim() === "") {
      throw new TypeError("Pressroom: apiKey is required (sign up with Pressroom.signup, or use the demo key)");
    }
    this.#apiKey = options.apiKey;
    this.#transport = makeTransport(options);
    this.baseUrl = this.#transport.baseUrl;
  }

  /** POST /v1/signup (no key needed): creates a free-plan key, shown only once. */
  static async signup(options: SignupOptions): Promise<SignupResponse> {
    const { email, ...transportOptions } = options;
    return requestJson<SignupResponse>(makeTransport(transportOptions), "POST", "/v1/signup", { body: { email } });
  }

  #call<T>(method: Method, path: string, body?: unknown, options?: RequestOptions): Promise<T> {
    let idempotencyKey: string | undefined;
    try {
      idempotencyKey = options && this.#idempotencyKey(options);
    } catch (err) {
      return Promise.reject(err);
    }
    const waitForSlot = options?.waitForSlot;
    if (waitForSlot !== undefined && !validSlotWait(waitForSlot)) {
      return Promise.reject(new TypeError("Pressroom: waitForSlot must be a whole number of seconds from 1 to 60"));
    }
    return requestJson<T>(this.#transport, method, path, { apiKey: this.#apiKey, body, idempotencyKey, waitForSlot });
  }

  /** The Idempotency-Key of a call that takes one: the given one, or with retries on one of its own. */
  #idempotencyKey({ idempotencyKey }: RequestOptions): string | undefined {
    if (idempotencyKey !== undefined) {
      if (!IDEMPOTENCY_KEY.test(idempotencyKey)) throw new TypeError("Pressroom: idempotencyKey must be 1 to 255 visible ASCII characters");
      return idempotencyKey;
    }
    return this.#transport.maxRetries > 0 ? randomUUID() : undefined;
  }

  /**
   * POST /v1/render: a PDF from `template_id`, `html` or a public page (`url`), shaped by `options`. Without webhook_url
   * the answer is the finished output (or `queued` when the service's wait
   * ran out: poll `job(id)`); with webhook_url it is always `queued` and the
   * result arrives by signed callback; with `async: true` it is `queued` at once
   * and `waitForJob(id)` waits for the end. See RequestOptions for idempotencyKey.
   */
  render(request: RenderRequest & ({ webhook_url: string } | { async: true }), options?: RequestOptions): Promise<JobQueued>;
  render(request: RenderRequest, options?: RequestOptions): Promise<RenderResponse>;
  render(request: RenderRequest, options?: RequestOptions): Promise<RenderResponse> {
    return this.#call<RenderResponse>("POST", "/v1/render", request, options ?? {});
  }

  /** POST /v1/image: a PNG (or jpeg, webp: options.format) from an image template or a public page (`url`). Same answers as `render`. */
  image(request: ImageRequest & ({ webhook_url: string } | { async: true }), options?: RequestOptions): Promise<JobQueued>;
  image(request: ImageRequest, options?: RequestOptions): Promise<ImageResponse>;
  image(request: ImageRequest, options?: RequestOptions): Promise<ImageResponse> {
    return this.#call<ImageResponse>("POST", "/v1/image", request, options ?? {});
  }

  /**
   * POST /v1/screenshot: an image (png, or options.format) of raw `html` (filled with `data`) or of a public page (`url`): the
   * viewport (options.width × height × device_scale_factor), the whole page (full_page), one element (selector) or a clip.
   * Same answers as `image`; `screenshotDocument` answers the bytes.
   */
  screenshot(request: ScreenshotRequest & ({ webhook_url: string } | { async: true }), options?: RequestOptions): Promise<JobQueued>;
  screenshot(request: ScreenshotRequest, options?: RequestOptions): Promise<ImageResponse>;
  screenshot(request: ScreenshotRequest, options?: RequestOptions): Promise<ImageResponse> {
    return this.#call<ImageResponse>("POST", "/v1/screenshot", request, options ?? {});
  }

  /**
   * POST /v1/render, answered with the PDF itself in one round trip (Accept:
   * application/pdf): the bytes with the job's id, signed URL and expiry; or
   * `queued` when the service's wait ran out (poll `job(id)`, then
   * `download(url)`). For a webhook job, use `render`.
   */
  renderDocument(request: Omit<RenderRequest, "webhook_url">, options?: RequestOptions): Promise<RenderedDocument | JobQueued> {
    return this.#document("/v1/render", "application/pdf", request, options);
  }

  /** POST /v1/image, answered with the image itself in one round trip (Accept: image/png, or the type of options.format). Same answers as `renderDocument`. */
  imageDocument(request: Omit<ImageRequest, "webhook_url">, options?: RequestOptions): Promise<RenderedDocument | JobQueued> {
    return this.#document("/v1/image", `image/${request.options?.format ?? "png"}`, request, options);
  }

  /** POST /v1/screenshot, answered with the image itself in one round trip. Same answers as `imageDocument`. */
  screenshotDocument(request: Omit<ScreenshotRequest, "webhook_url">, options?: RequestOptions): Promise<RenderedDocument | JobQueued> {
    return this.#document("/v1/screenshot", `image/${request.options?.format ?? "png"}`, request, options);
  }

  async #document(path: string, documentType: string, body: object, options: RequestOptions = {}): Promise<RenderedDocument | JobQueued> {
    const idempotencyKey = this.#idempotencyKey(options);
    const { waitForSlot } = options;
    if (waitForSlot !== undefined && !validSlotWait(waitForSlot)) throw new TypeError("Pressroom: waitForSlot must be a whole number of seconds from 1 to 60");
    const answer = await requestDocument(this.#transport, path, documentType, { apiKey: this.#apiKey, body, idempotencyKey, waitForSlot });
    if ("json" in answer) {
      const json = answer.json as RenderResponse;
      // A service that answers JSON anyway: the document is one more request away.
      return json.status === "succeeded" ? { ...json, bytes: await this.download(json.url) } : json;
    }
    const header = (name: string) => answer.headers.get(name) ?? "";
    return {
      id: header("pressroom-job-id"),
      status: "succeeded",
      url: header("content-location"),
      expires_at: header("pressroom-expires-at"),
      content_type: documentType,
      size_bytes: answer.bytes.byteLength,
      bytes: answer.bytes,
    };
  }

  /** GET /v1/templates: the public catalog and this key's own templates (visibility "private"). */
  templates(): Promise<TemplatesResponse> {
    return this.#call<TemplatesResponse>("GET", "/v1/templates");
  }

  /**
   * POST /v1/templates: stores a template of this key's account (version 1),
   * once it rendered its sample_data. Assets are given as bytes and sent as
   * base64; the html refers to them as assets/<name>. Rejects with
   * TEMPLATE_EXISTS (409), TEMPLATE_LIMIT_REACHED (403), PAYLOAD_INVALID or
   * RENDER_FAILED (422).
   */
  createTemplate(template: TemplateInput): Promise<Template> {
    return this.#call<Template>("POST", "/v1/templates", templateBody(template));
  }

  /** PUT /v1/templates/<id>: replaces an own template with its next version. */
  updateTemplate(id: string, template: Omit<TemplateInput, "id">): Promise<Template> {
    return this.#call<Template>("PUT", `/v1/templates/${encodeURIComponent(id)}`, templateBody(template));
  }

  /** GET /v1/templates/<id>, or /versions/<version>: a template's current version, or the one given. */
  template(id: string, version?: number): Promise<Template> {
    const path = `/v1/templates/${encodeURIComponent(id)}`;
    return this.#call<Template>("GET", version === undefined ? path : `${path}/versions/${encodeURIComponent(String(version))}`);
  }

  /** GET /v1/templates/<id>/versions: newest first. */
  templateVersions(id: string): Promise<TemplateVersionsResponse> {
    return this.#call<TemplateVersionsResponse>("GET", `/v1/templates/${encodeURIComponent(id)}/versions`);
  }

  /** GET /v1/templates/<id>/versions/<n>/assets/<name>: the bytes of one asset of a version of this key's own template. */
  templateAsset(id: string, version: number, name: string): Promise<Uint8Array> {
    const path = `/v1/templates/${encodeURIComponent(id)}/versions/${encodeURIComponent(String(version))}/assets/${encodeURIComponent(name)}`;
    return requestBytes(this.#transport, `${this.#transport.baseUrl}${path}`, this.#apiKey);
  }

  /** DELETE /v1/templates/<id>: renders naming it get TEMPLATE_NOT_FOUND from now on (jobs admitted before finish). */
  deleteTemplate(id: string): Promise<void> {
    return this.#call<void>("DELETE", `/v1/templates/${encodeURIComponent(id)}`);
  }

  /** GET /v1/templates/<id>/preview.png, or /versions/<version>/preview.png: the PNG of the current version, or of the one given (each keeps its own). */
  templatePreview(id: string, version?: number): Promise<Uint8Array> {
    const path = `/v1/templates/${encodeURIComponent(id)}`;
    const versioned = version === undefined ? path : `${path}/versions/${encodeURIComponent(String(version))}`;
    return requestBinary(this.#transport, "GET", `${versioned}/preview.png`, "image/png", { apiKey: this.#apiKey });
  }

  /**
   * POST /v1/templates/preview: the PNG of an unsaved template (id optional) rendered with its
   * sample_data, as saving it would render its preview; nothing is stored. Counted as one of the
   * month's previews; a source that does not compile rejects PAYLOAD_INVALID naming its line.
   */
  previewTemplate(template: Omit<TemplateInput, "id"> & { id?: string }): Promise<Uint8Array> {
    return requestBinary(this.#transport, "POST", "/v1/templates/preview", "image/png", { apiKey: this.#apiKey, body: templateBody(template) });
  }

  /** GET /v1/keys/usage: renders, previews, rate limit and concurrency of this key. */
  usage(): Promise<UsageResponse> {
    return this.#call<UsageResponse>("GET", "/v1/keys/usage");
  }

  /** GET /v1/keys/webhook-secret: the secret that signs this key's callbacks. */
  webhookSecret(): Promise<WebhookSecretResponse> {
    return this.#call<WebhookSecretResponse>("GET", "/v1/keys/webhook-secret");
  }

  /**
   * POST /v1/keys/webhook-secret/rotate: a new secret. The replaced one keeps
   * signing callbacks (a second v1 signature) until previous_secret_expires_at.
   */
  rotateWebhookSecret(): Promise<RotatedWebhookSecretResponse> {
    return this.#call<RotatedWebhookSecretResponse>("POST", "/v1/keys/webhook-secret/rotate");
  }

  /**
   * POST /v1/keys/rotate: a new value for this key (same account), shown once; the key this client
   * holds keeps working until `previous_key_expires_at` (24 h), so make a new client with the new one.
   */
  rotateKey(): Promise<RotatedKeyResponse> {
    return this.#call<RotatedKeyResponse>("POST", "/v1/keys/rotate");
  }

  /** POST /v1/billing/checkout: starts an upgrade; send the user to `checkout_url`. */
  checkout(request: CheckoutRequest, options?: RequestOptions): Promise<CheckoutResponse> {
    return this.#call<CheckoutResponse>("POST", "/v1/billing/checkout", { plan: request.plan }, options ?? {});
  }

  /** GET /v1/jobs/<id>: status, result and event history of one of this key's jobs. */
  job(id: string): Promise<JobView> {
    return this.#call<JobView>("GET", `/v1/jobs/${encodeURIComponent(id)}`);
  }

  /**
   * Reads the job every `intervalMs` until it succeeded or failed, and resolves
   * with it (check `status`). Rejects with PressroomError TIMEOUT (status 0) when
   * it is still queued or rendering after `timeoutMs`.
   */
  async waitForJob(id: string, options: WaitOptions = {}): Promise<JobView> {
    const timeoutMs = options.timeoutMs ?? 90_000;
    const intervalMs = options.intervalMs ?? 1_000;
    if (!(timeoutMs >= 0) || !(intervalMs > 0)) throw new TypeError("Pressroom: timeoutMs must be >= 0 and intervalMs > 0");
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const job = await this.job(id);
      if (job.status === "succeeded" || job.status === "failed") return job;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new PressroomError({
          code: "TIMEOUT",
          status: 0,
          message: `job ${id} is still ${job.status} after ${timeoutMs} ms`,
          hint: "Wait longer (timeoutMs), or send webhook_url to be called when it finishes.",
        });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, left)));
    }
  }

  /**
   * POST /v1/batches: 1 to 1,000 render or image requests as one batch, admitted all or none
   * (one quota unit per item; QUOTA_EXCEEDED and nothing runs otherwise), counted once against
   * the rate limit; its items run within the key's concurrency. Resolves with the batch,
   * `accepted`. See RequestOptions for idempotencyKey.
   */
  createBatch(request: BatchRequest, options?: RequestOptions): Promise<Batch> {
    return this.#call<Batch>("POST", "/v1/batches", request, options ?? {});
  }

  /** GET /v1/batches/<id>: the batch with its live counts. */
  batch(id: string): Promise<Batch> {
    return this.#call<Batch>("GET", `/v1/batches/${encodeURIComponent(id)}`);
  }

  /** GET /v1/batches/<id>/items: a page of its items in item order; page with `cursor: next_cursor`. */
  batchItems(id: string, query: BatchItemsQuery = {}): Promise<BatchItemList> {
    return this.#call<BatchItemList>("GET", `/v1/batches/${encodeURIComponent(id)}/items${queryString(query)}`);
  }

  /** DELETE /v1/batches/<id>: cancels the items that have not started (their units refunded); resolves with the batch, `cancelled`. */
  cancelBatch(id: string): Promise<Batch> {
    return this.#call<Batch>("DELETE", `/v1/batches/${encodeURIComponent(id)}`);
  }

  // The account's lists and a callback's replay (GET /v1/jobs, /v1/keys/usage/daily, /v1/webhooks/deliveries).

  /** GET /v1/jobs: this key's jobs, newest first, each as `job(id)` answers it; page with `cursor: next_cursor`. */
  jobs(query: JobListQuery = {}): Promise<JobList> {
    return this.#call<JobList>("GET", `/v1/jobs${queryString(query)}`);
  }

  /** GET /v1/keys/usage/daily: this key's jobs per UTC day by outcome (at most 92 days; default the current period to today). */
  dailyUsage(query: DailyUsageQuery = {}): Promise<DailyUsage> {
    return this.#call<DailyUsage>("GET", `/v1/keys/usage/daily${queryString(query)}`);
  }

  /** GET /v1/webhooks/deliveries: each attempt of this key's callbacks, newest first. */
  webhookDeliveries(query: DeliveryListQuery = {}): Promise<DeliveryList> {
    return this.#call<DeliveryList>("GET", `/v1/webhooks/deliveries${queryString(query)}`);
  }

  /** POST /v1/webhooks/deliveries/<id>/replay: the callback sent again (same event id, signed afresh), one attempt; resolves with it, pending. */
  replayWebhookDelivery(id: string): Promise<Delivery> {
    return this.#call<Delivery>("POST", `/v1/webhooks/deliveries/${encodeURIComponent(id)}/replay`);
  }

  /**
   * DELETE /v1/outputs/<id>: deletes one of this key's outputs now, before it expires; its signed
   * URL answers URL_EXPIRED (410) from then on and nothing of it stays stored. Takes the output's
   * id (a job's `output_id`) or its URL. Another key's output, or one already gone, rejects NOT_FOUND.
   */
  deleteOutput(idOrUrl: string): Promise<void> {
    return this.#call<void>("DELETE", `/v1/outputs/${encodeURIComponent(outputIdOf(idOrUrl, this.baseUrl))}`);
  }

  /**
   * Downloads an output by its signed URL (absolute, or relative to baseUrl).
   * The API key is not sent: the signed URL is the credential. Expired or
   * altered URLs reject with URL_EXPIRED (410) or URL_INVALID (403).
   */
  download(url: string): Promise<Uint8Array> {
    let target: URL;
    try {
      target = new URL(url, `${this.baseUrl}/`);
    } catch {
      return Promise.reject(new TypeError("Pressroom: download needs the url of a render or job"));
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") {
      return Promise.reject(new TypeError("Pressroom: download URLs must be http(s)"));
    }
    return requestBytes(this.#transport, target.href);
  }
}

/** An output's id: as given, or the path segment of its URL (/v1/outputs/<id>?exp…). */
function outputIdOf(idOrUrl: string, baseUrl: string): string {
  if (!idOrUrl.includes("/")) return idOrUrl;
  const id = /^\/v1\/outputs\/([^/]+)$/.exec(new URL(idOrUrl, `${baseUrl}/`).pathname)?.[1];
  if (!id) throw new TypeError("Pressroom: deleteOutput needs an output's id or its /v1/outputs/<id> URL");
  return decodeURIComponent(id);
}

/** A template's body as the API takes it: its assets in base64. */
function templateBody({ assets, ...fields }: Partial<TemplateInput>): object {
  return assets === undefined ? fields : { ...fields, assets: Object.fromEntries(Object.entries(assets).map(([name, bytes]) => [name, base64(bytes)])) };
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** Alias of `Pressroom`. */
export { Pressroom as PressroomClient };

/** A `Prefer: wait=N` the service takes: whole seconds, 1 to 60. */
function validSlotWait(seconds: number): boolean {
  return Number.isInteger(seconds) && seconds >= 1 && seconds <= 60;
}
