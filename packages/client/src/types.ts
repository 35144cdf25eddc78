/**
 * Request and response bodies of the Pressroom HTTP API (spec
 * service-interface.md plus the decisions of DESIGN.md). Field names are the
 * wire names (snake_case).
 */

/** Every plan. */
export type Plan = "demo" | "free" | "starter" | "pro" | "business";
/** The plans an upgrade can target. */
export type PaidPlan = "starter" | "pro" | "business";

export type JobStatus = "queued" | "rendering" | "succeeded" | "failed";

/** When the page is ready to print: exactly one condition, within the render deadline. */
export type WaitFor = { selector: string } | { expression: string } | { network_idle: true } | { delay_ms: number };

/** A CSS length in mm, cm, in, px, pt or pc, e.g. "20mm", or "0". */
export type CssLength = string;

export type PaperFormat = "A0" | "A1" | "A2" | "A3" | "A4" | "A5" | "A6" | "B4" | "B5" | "Letter" | "Legal" | "Tabloid" | "Ledger" | "Executive";

/** A render's `options` (every one optional; they override the template's settings). */
export interface RenderOptions {
  /** A paper format, in any case ("a4" is A4). */
  format?: PaperFormat | Lowercase<PaperFormat> | Uppercase<PaperFormat>;
  /** With height, instead of format; each 1 to 200 inches. */
  width?: CssLength;
  height?: CssLength;
  landscape?: boolean;
  /** Must leave at least half an inch of the paper to print on, across and down. */
  margin?: { top?: CssLength; right?: CssLength; bottom?: CssLength; left?: CssLength };
  /** 0.1 to 2. */
  scale?: number;
  /** Default true. */
  print_background?: boolean;
  /** e.g. "1-3,5". */
  page_ranges?: string;
  prefer_css_page_size?: boolean;
  /** Default "print". */
  media?: "print" | "screen";
  /** Handlebars with the request's data; elements of class pageNumber, totalPages, title and date are filled in per page. */
  header_html?: string;
  footer_html?: string;
  wait_for?: WaitFor;
  metadata?: { title?: string; author?: string; subject?: string; keywords?: string[]; creator?: string };
  /** The download's file name (≤ 200 characters, made safe): downloads answer Content-Disposition: attachment. */
  filename?: string;
  /** Content-Disposition of downloads; default attachment with a filename, inline without. */
  disposition?: "inline" | "attachment";
  /**
   * How long the output is kept, and its URL valid, in seconds: 60 to the plan's maximum
   * (Demo and Free a day, Starter 3 days, Pro and Business 7); default 24 h.
   */
  output_ttl_seconds?: number;
  pdfa?: "PDF/A-1b" | "PDF/A-2b" | "PDF/A-3b";
  pdfua?: boolean;
  /** Bookmarks from the document's headings (h1 to h6), nested by level; not with documents. */
  outline?: boolean;
  /** The locale (BCP 47, e.g. "de-DE") and IANA time zone of the header's and footer's date (class "date"). */
  locale?: string;
  time_zone?: string;
  /** Default true: an uncaught exception in the script fails the job; false renders and lists them in the job's succeeded event (`script_errors`). */
  fail_on_script_error?: boolean;
  /** true: an image, stylesheet, font or script that fails to load fails the job (RENDER_FAILED), naming it (no query) and its status. */
  fail_on_resource_error?: boolean;
  /** Drawn as selectable text on every page; opacity 0–1 (default 0.15), angle in degrees (default 45). */
  watermark?: { text: string; opacity?: number; angle?: number; font_size?: number };
  /** AES-256; the passwords are never logged or kept in the job's events. A password must not start with - nor hold control characters. */
  encrypt?: { user_password?: string; owner_password: string; permissions: { print: boolean; copy: boolean; modify: boolean; annotate: boolean } };
}

/**
 * How a `url`'s page is asked for: sent only to the url's own origin (scheme, host and port), never
 * to another origin, not even across a redirect; never logged or kept in the job's events.
 */
export interface UrlOptions {
  /** At most 20 headers, e.g. { Authorization: "Bearer …" }; not Host, Content-Length, Cookie, User-Agent or the connection's own. */
  headers?: Record<string, string>;
  /** At most 20 cookies, each sent only under its path (default "/"). */
  cookies?: { name: string; value: string; path?: string }[];
  /** HTTP Basic authentication; not with a headers.Authorization. */
  basic_auth?: { username: string; password: string };
  /** The User-Agent header (default: the engine's Chromium). */
  user_agent?: string;
}

/**
 * Where the output is also delivered: once made, it is PUT to `url` (a URL signed in advance for a
 * PUT: S3, R2 or GCS presigned, Azure Blob SAS; https on the default port, ≤ 8,192 characters)
 * through the service's network guard, retried on the webhooks' schedule. The job succeeds only
 * when the destination answered 2xx; one that never does fails it `DESTINATION_FAILED` (502, not
 * refunded). The job shows the host only: the url's path and query and the header values are never
 * shown or logged.
 */
export interface Destination {
  url: string;
  /** Headers the signature needs (e.g. `x-ms-blob-type: BlockBlob`); at most 20; not Host, Content-Length and the like. */
  headers?: Record<string, string>;
}

/** Body of POST /v1/render: exactly one source (template_id, html, url or documents). */
export interface RenderRequest {
  /** A stored template (^[a-z0-9][a-z0-9-]{0,63}$); see `templates()`. */
  template_id?: string;
  /** Pins a version of the template; without it, its current version when the request is admitted. */
  template_version?: number;
  /** Raw HTML (a Handlebars template), at most 524,288 bytes as UTF-8 (512 KiB; the gateway's limits.ts is the definition). */
  html?: string;
  /** A public page (http or https, ≤ 2,048 characters), fetched through the service's network guard. */
  url?: string;
  /** With `url` only: the headers, cookies, basic auth and user agent its page is asked for with. */
  url_options?: UrlOptions;
  /** A JSON object with the values for the template ({} for a url). */
  data: object;
  options?: RenderOptions;
  /** HTTPS callback address (default port, ≤ 2,048 chars); makes the request asynchronous. */
  webhook_url?: string;
  /** true: answered `queued` at once (202, Location: /v1/jobs/{id}), no webhook needed; wait with `waitForJob(id)`. */
  async?: boolean;
  /**
   * true: test mode. The output is stamped TEST on every page and counts against the key's daily test allowance
   * (`usage().test`), never the monthly renders; past it, QUOTA_EXCEEDED until 00:00 UTC.
   */
  test?: boolean;
  /**
   * A merged PDF: 1 to 20 parts rendered in order into one document (`data` is then `{}`), one
   * quota unit each, admitted all or none; a failing part fails the job, its error naming
   * `documents[i]`.
   */
  documents?: DocumentPart[];
  /** PUT the output there before the job succeeds (a sync call answers once it was accepted). */
  destination?: Destination;
}

/** One part of a merged PDF: exactly one of template_id, html or url. */
export interface DocumentPart {
  template_id?: string;
  template_version?: number;
  html?: string;
  url?: string;
  /** With the part's `url` only (see RenderRequest.url_options). */
  url_options?: UrlOptions;
  /** The part's values (default {}). */
  data?: object;
  /** The part's page, header, footer and readiness options (see the OpenAPI document's PartOptions). */
  options?: Pick<
    RenderOptions,
    | "format"
    | "width"
    | "height"
    | "landscape"
    | "margin"
    | "scale"
    | "print_background"
    | "page_ranges"
    | "prefer_css_page_size"
    | "media"
    | "header_html"
    | "footer_html"
    | "wait_for"
  >;
}

/** An image's `options`. */
export interface ImageOptions {
  /** Default "png". */
  format?: "png" | "jpeg" | "webp";
  /** jpeg and webp: 1 to 100 (default 90). */
  quality?: number;
  /** png and webp: a transparent background where the page paints none. */
  omit_background?: boolean;
  /** url only: the viewport in CSS pixels (default 1280 × 800) and device pixels per CSS pixel (1 to 3). */
  width?: number;
  height?: number;
  device_scale_factor?: number;
  wait_for?: WaitFor;
  filename?: string;
  disposition?: "inline" | "attachment";
  /** As RenderOptions' output_ttl_seconds. */
  output_ttl_seconds?: number;
  /** As RenderOptions' fail_on_script_error and fail_on_resource_error. */
  fail_on_script_error?: boolean;
  fail_on_resource_error?: boolean;
}

/** Body of POST /v1/image: exactly one of template_id (a png template) or url. */
export interface ImageRequest {
  template_id?: string;
  template_version?: number;
  url?: string;
  /** With `url` only (see RenderRequest.url_options). */
  url_options?: UrlOptions;
  data: object;
  options?: ImageOptions;
  webhook_url?: string;
  /** As RenderRequest's. */
  async?: boolean;
  /** As RenderRequest's. */
  destination?: Destination;
  /** As RenderRequest's: the image (a png) is stamped TEST across its middle. */
  test?: boolean;
}

/** A rectangle of the page in CSS pixels, from its top-left corner (a screenshot's `clip`). */
export interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A screenshot's `options`: an image's, and at most one of full_page, selector and clip (none: the viewport). */
export interface ScreenshotOptions extends ImageOptions {
  /** The whole page, as tall as the document (at most 10,000 CSS pixels), as wide as the viewport. */
  full_page?: boolean;
  /** The first element this CSS selector matches; none fails the job (RENDER_FAILED), naming the selector. */
  selector?: string;
  clip?: Clip;
}

/** Body of POST /v1/screenshot: exactly one of html (a Handlebars template filled with data) or url. */
export interface ScreenshotRequest {
  html?: string;
  url?: string;
  /** As RenderRequest's, with a url. */
  url_options?: UrlOptions;
  /** Values for the html (default {}). */
  data?: object;
  options?: ScreenshotOptions;
  webhook_url?: string;
  /** As RenderRequest's. */
  async?: boolean;
  /** As ImageRequest's. */
  test?: boolean;
}

/** 200 answer of a synchronous render or image request. */
export interface RenderSucceeded {
  id: string;
  status: "succeeded";
  /** Signed, expiring download URL: anyone holding it can download the output. */
  url: string;
  expires_at: string;
  content_type: string;
  size_bytes: number;
}

/**
 * 202 answer: the job was accepted and runs in the background. Returned for
 * every request with webhook_url, and for a synchronous request that the
 * service did not finish within its wait (poll it with `job(id)`).
 */
export interface JobQueued {
  id: string;
  status: "queued";
}

export type RenderResponse = RenderSucceeded | JobQueued;

/** A finished synchronous render with its bytes, from one request (`renderDocument`, `imageDocument`). */
export interface RenderedDocument extends RenderSucceeded {
  /** The document itself (PDF or PNG); the same bytes `url` serves until it expires. */
  bytes: Uint8Array;
}
export type ImageResponse = RenderResponse;

/** GET /v1/keys/usage: the calling key's standing in the current period. */
export interface UsageResponse {
  plan: Plan;
  period: { start: string; end: string };
  renders: { used: number; limit: number; remaining: number };
  /** Template previews rendered this month (saves, preview.png not yet stored): their own allowance, beside the renders. */
  previews: { used: number; limit: number; remaining: number };
  /** Test-mode renders and images (`test: true`) made this UTC day, against the plan's daily allowance; apart from the renders. */
  test: { used: number; limit: number; remaining: number };
  rate_limit: { limit: number; remaining: number; reset_seconds: number; window_seconds: number };
  concurrency: { limit: number; in_flight: number };
}

/** GET /v1/keys/webhook-secret. */
export interface WebhookSecretResponse {
  /** `whsec_…`: verify callbacks with it; keep it server-side. */
  secret: string;
}

/** POST /v1/keys/webhook-secret/rotate: the new secret; the replaced one also signs callbacks until previous_secret_expires_at (24 h). */
export interface RotatedWebhookSecretResponse {
  secret: string;
  previous_secret_expires_at: string;
}

/** Body of POST /v1/billing/checkout. */
export interface CheckoutRequest {
  plan: PaidPlan;
}

/** 201 answer of POST /v1/billing/checkout. */
export interface CheckoutResponse {
  checkout_url: string;
  session_id: string;
  plan: PaidPlan;
}

/** 201 answer of POST /v1/keys/rotate. The new key is shown only once. */
export interface RotatedKeyResponse {
  /** The key's new value (same account), working at once. */
  api_key: string;
  /** Until when the key that was replaced still works (24 h after the rotation); refused after. */
  previous_key_expires_at: string;
}

/** Body of POST /v1/signup. */
export interface SignupRequest {
  email: string;
}

/** 201 answer of POST /v1/signup. The key is shown only once. */
export interface SignupResponse {
  api_key: string;
  plan: Plan;
}

/** GET /v1/jobs/<id>: one of the caller's own jobs. */
export interface JobView {
  id: string;
  status: JobStatus;
  kind: "render" | "image";
  template_id: string | null;
  /** The template version the job renders. */
  template_version: number | null;
  /** Present (true) on a test-mode job: stamped TEST, counted against the daily test allowance. */
  test?: true;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** The output's id once succeeded, for deleteOutput; it stays after the output is gone. */
  output_id: string | null;
  /** A download URL signed for this answer while the output lives; null before success and once the output expired or was deleted. */
  url: string | null;
  expires_at: string | null;
  content_type: string | null;
  size_bytes: number | null;
  error: { code: string; message: string } | null;
  /** The request's destination (null without one): its host only, and how its delivery went. */
  destination: {
    host: string;
    state: "pending" | "delivered" | "exhausted";
    attempts: number;
    last_status: number | null;
    last_error: string | null;
    next_attempt_at: string | null;
  } | null;
  webhook: {
    state: "none" | "pending" | "delivered" | "exhausted";
    attempts: number;
    /** The HTTP status of the last scheduled attempt; 0 when no response came (last_error says why). */
    last_status: number | null;
    /**
     * Why the last scheduled attempt failed: a TLS failure, a host name that does not resolve, a refused (private) address,
     * a refused connection, a timeout, an HTTP status. Null once delivered.
     */
    last_error: string | null;
    next_attempt_at: string | null;
  } | null;
  /** The job's ordered event history. */
  /** `script_errors`: on job.succeeded, the uncaught exceptions of a document rendered with `fail_on_script_error: false`. */
  /** `destination`: on job.destination_attempted, one PUT to the destination (never its path or query). */
  events: {
    id: string;
    type: string;
    time: string;
    source: string;
    script_errors?: string[];
    destination?: { attempt: number; status: number; duration_ms: number; host: string; error: string | null; next_attempt_at: string | null };
  }[];
}

/** The error body of every non-2xx API answer: exactly these three fields. */
export interface ErrorBody {
  error: string;
  code: string;
  hint: string;
}
