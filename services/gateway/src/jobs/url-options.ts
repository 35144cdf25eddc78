import type { jobEventsV1 } from "@pressroom/contracts";
import { z } from "@pressroom/platform";

/**
 * `url_options`: the credentials a url source's page is asked for with (headers, cookies, basic
 * auth, user agent). The render engine sends them only to the url's own origin. No value is
 * ever echoed in an error: a refusal names the field (and a header's or cookie's name when it
 * is a well-formed one), never what was sent.
 */

export const MAX_URL_HEADERS = 20;
export const MAX_URL_COOKIES = 20;
/** Names, values and paths of every header and cookie together, in UTF-8 bytes. */
export const MAX_URL_OPTIONS_BYTES = 8 * 1024;
const MAX_NAME = 256;
const MAX_VALUE = 4096;
const MAX_USER_AGENT = 512;
const MAX_CREDENTIAL = 256;

/** RFC 9110's token: a header's (and a cookie's) name. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** RFC 6265's cookie-octets: no control character, space, quote, comma, semicolon or backslash. */
const COOKIE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/;
/** Whether a value holds a control character other than tab (a header value may hold tabs, never a line break). */
const hasControl = (value: string) => /\p{Cc}/u.test(value.replaceAll("\t", ""));

/** Headers the engine sets itself, or that another field carries: refused in `headers`, saying why. */
const FORBIDDEN_HEADERS: Record<string, string> = {
  host: "is set from the url",
  "content-length": "is set by the engine",
  "transfer-encoding": "is set by the engine",
  connection: "is set by the engine",
  "keep-alive": "is set by the engine",
  upgrade: "is set by the engine",
  te: "is set by the engine",
  trailer: "is set by the engine",
  expect: "is set by the engine",
  "accept-encoding": "is set by the engine (the encodings it can decode)",
  "proxy-authorization": "is not sent: no proxy is in the way",
  cookie: "goes in url_options.cookies",
  "user-agent": "goes in url_options.user_agent",
};

const HEADER_HINT = `Send at most ${MAX_URL_HEADERS} headers, each a token name (letters, digits, -) and a value of at most ${MAX_VALUE} characters without line breaks; not Host, Content-Length, Cookie or User-Agent (cookies and user_agent carry those).`;
/** The hint of a url_options refusal that has none of its own. */
export const URL_OPTIONS_HINT =
  `Send headers (at most ${MAX_URL_HEADERS}), cookies (at most ${MAX_URL_COOKIES}, each {"name", "value", "path"?}: a token name, a value without spaces, quotes, commas, ` +
  'semicolons or backslashes, a path starting with /), basic_auth {"username", "password"} and user_agent, without line breaks.';

type Ctx = { value: unknown; issues: z.core.$ZodRawIssue[] };
function problem(ctx: Ctx, path: PropertyKey[], message: string, hint: string): void {
  ctx.issues.push({ code: "custom", message, input: undefined, path, params: { hint } });
}

const Headers = z
  .record(z.string(), z.string({ error: "each value must be a string" }), { error: "must be an object of header names and values" })
  .check((ctx) => {
    const entries = Object.entries(ctx.value);
    if (entries.length > MAX_URL_HEADERS) return problem(ctx, [], `must have at most ${MAX_URL_HEADERS} headers`, HEADER_HINT);
    for (const [name, value] of entries) {
      if (!TOKEN.test(name) || name.length > MAX_NAME) return problem(ctx, [], "a header name is not a valid token", HEADER_HINT);
      const why = FORBIDDEN_HEADERS[name.toLowerCase()];
      if (why) return problem(ctx, [name], why, HEADER_HINT);
      if (hasControl(value)) return problem(ctx, [name], "must not contain line breaks or control characters", HEADER_HINT);
      if (value.length > MAX_VALUE) return problem(ctx, [name], `must be at most ${MAX_VALUE} characters`, HEADER_HINT);
    }
  })
  .meta({
    description:
      `Extra request headers (at most ${MAX_URL_HEADERS}), e.g. {"Authorization": "Bearer …"}. Not Host, Content-Length, Cookie, User-Agent or the ` +
      "connection's own headers.",
    examples: [{ Authorization: "Bearer eyJhbGciOi…" }],
  });

export const UrlCookie = z
  .strictObject({
    name: z
      .string({ error: "must be a string" })
      .regex(TOKEN, "must be a token (letters, digits, -, _)")
      .max(MAX_NAME, `must be at most ${MAX_NAME} characters`),
    value: z
      .string({ error: "must be a string" })
      .regex(COOKIE_VALUE, "must not contain spaces, quotes, commas, semicolons, backslashes or control characters")
      .max(MAX_VALUE, `must be at most ${MAX_VALUE} characters`),
    path: z
      .string({ error: "must be a string" })
      .refine((value) => value.startsWith("/") && !value.includes(";") && !hasControl(value), "must start with / and contain no semicolon or control character")
      .max(1024, "must be at most 1024 characters")
      .optional()
      .meta({ description: 'The cookie is sent with requests under this path (default "/").' }),
  })
  .meta({ id: "UrlCookie", examples: [{ name: "session", value: "3f2a…", path: "/" }] });

const printable = (max: number) =>
  z
    .string({ error: "must be a string" })
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .refine((value) => !hasControl(value), "must not contain line breaks or control characters");

export const UrlOptions = z
  .strictObject({
    headers: Headers.optional(),
    cookies: z
      .array(UrlCookie, { error: "must be an array of cookies" })
      .max(MAX_URL_COOKIES, `must have at most ${MAX_URL_COOKIES} cookies`)
      .optional()
      .meta({ description: `At most ${MAX_URL_COOKIES} cookies, sent in a Cookie header.` }),
    basic_auth: z
      .strictObject({
        username: printable(MAX_CREDENTIAL).refine((value) => !value.includes(":"), "must not contain a colon"),
        password: z
          .string({ error: "must be a string" })
          .max(MAX_CREDENTIAL, `must be at most ${MAX_CREDENTIAL} characters`)
          .refine((value) => !hasControl(value), "must not contain line breaks or control characters"),
      })
      .optional()
      .meta({ description: "HTTP Basic authentication (an Authorization header)." }),
    user_agent: printable(MAX_USER_AGENT).optional().meta({ description: "The User-Agent header (default: the engine's Chromium)." }),
  })
  .check((ctx) => {
    const { headers = {}, cookies = [], basic_auth } = ctx.value;
    if (basic_auth && Object.keys(headers).some((name) => name.toLowerCase() === "authorization")) {
      problem(ctx, ["basic_auth"], "conflicts with headers.Authorization", "Send either basic_auth or an Authorization header, not both.");
    }
    const bytes = [...Object.entries(headers).flat(), ...cookies.flatMap((cookie) => [cookie.name, cookie.value, cookie.path ?? ""])].reduce(
      (sum, text) => sum + Buffer.byteLength(text, "utf8"),
      0,
    );
    if (bytes > MAX_URL_OPTIONS_BYTES) {
      problem(ctx, [], `headers and cookies add up to more than ${MAX_URL_OPTIONS_BYTES} bytes`, "Send fewer or shorter headers and cookies.");
    }
  })
  .meta({
    id: "UrlOptions",
    description:
      "How the url's page is asked for: headers, cookies, basic auth and user agent, sent only in requests to the url's own origin (scheme, host and port) — " +
      "the page and its sub-resources there — never to another origin, not even across a redirect. " +
      "The values are credentials: they are never logged, traced, kept in the job's events or shown in its status.",
  });

export type UrlOptionsInput = z.infer<typeof UrlOptions>;

/** The url options as the job contract carries them. */
export function urlOptionsOf(input: UrlOptionsInput | undefined): jobEventsV1.UrlOptions | undefined {
  if (!input) return undefined;
  return {
    headers: input.headers ?? {},
    cookies: (input.cookies ?? []).map((cookie) => ({ name: cookie.name, value: cookie.value, path: cookie.path })),
    basicAuth: input.basic_auth,
    userAgent: input.user_agent,
  };
}

/** A check of a request (or a part) that has url_options: it needs a url. */
export function urlOptionsNeedUrl(ctx: { value: { url?: unknown; url_options?: unknown }; issues: z.core.$ZodRawIssue[] }): void {
  if (ctx.value.url_options === undefined || ctx.value.url !== undefined) return;
  ctx.issues.push({
    code: "custom",
    message: "applies to a url source only",
    input: undefined,
    path: ["url_options"],
    params: { hint: "Send url_options with a url, or drop it." },
  });
}
