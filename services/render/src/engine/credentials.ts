/**
 * A url source's credentials (the request's url_options) as the engine sends them: request
 * headers and cookies for the url's own origin, and for nothing else. Every request the page
 * makes goes through the fetcher (Chromium never reaches the network itself), so they are
 * added there, to each request whose origin (scheme, host and port) is the url's: the page,
 * each of its redirect hops that stays on that origin, and its sub-resources there. A request
 * to another origin, a redirect to another origin included, carries none of them. Chromium
 * never sees them: the page's script cannot read them (document.cookie, navigator.userAgent).
 */
export interface PageCredentials {
  /** The url source's origin, as URL.origin spells it. */
  origin: string;
  /** Request headers by name: the customer's, Authorization for basic auth, User-Agent. */
  headers: Record<string, string>;
  cookies: { name: string; value: string; path: string }[];
}

/** The url options as the job contract carries them (structurally). */
export interface UrlOptionsInput {
  headers?: Record<string, string>;
  cookies?: { name: string; value: string; path?: string | undefined }[];
  basicAuth?: { username: string; password: string } | undefined;
  userAgent?: string | undefined;
}

/** The credentials of the page at `url`, or undefined when it has none. */
export function pageCredentials(url: string, options: UrlOptionsInput | undefined): PageCredentials | undefined {
  if (!options) return undefined;
  const headers: Record<string, string> = { ...options.headers };
  if (options.basicAuth) {
    const { username, password } = options.basicAuth;
    headers.Authorization = `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;
  }
  if (options.userAgent !== undefined) headers["User-Agent"] = options.userAgent;
  const cookies = (options.cookies ?? []).map(({ name, value, path }) => ({ name, value, path: path || "/" }));
  if (Object.keys(headers).length === 0 && cookies.length === 0) return undefined;
  return { origin: new URL(url).origin, headers, cookies };
}

/** RFC 6265's path-match: the cookie's path is the request's path, or a prefix of it ending at a "/". */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

/**
 * The headers of a request to `url`: with the credentials when `url` is on their origin
 * (each of their headers replacing one of the same name, their cookies after the page's own),
 * the headers unchanged otherwise.
 */
export function withCredentials(url: URL, headers: Record<string, string>, credentials: PageCredentials | undefined): Record<string, string> {
  if (!credentials || url.origin !== credentials.origin) return headers;
  const replaced = new Set(Object.keys(credentials.headers).map((name) => name.toLowerCase()));
  const out: Record<string, string> = {};
  let pageCookies: string | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === "cookie") pageCookies = value;
    else if (!replaced.has(name.toLowerCase())) out[name] = value;
  }
  Object.assign(out, credentials.headers);
  const cookies = credentials.cookies.filter((cookie) => pathMatches(url.pathname, cookie.path)).map((cookie) => `${cookie.name}=${cookie.value}`);
  const cookie = [pageCookies, ...cookies].filter(Boolean).join("; ");
  if (cookie) out.Cookie = cookie;
  return out;
}
