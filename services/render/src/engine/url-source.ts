import { withCredentials, type PageCredentials } from "./credentials";
import { decodeBody, fetcherRequestHeaders } from "./network";
import { RenderFailure, type SubresourceFetcher } from "./types";

/** Redirects a url source may take before its page. */
const MAX_REDIRECTS = 5;
/** The most a url source's page (its HTML, decoded) may be. */
export const MAX_PAGE_BYTES = 5 * 1024 * 1024;
const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\s*(;|$)/i;

function unavailable(url: string, why: string): RenderFailure {
  return new RenderFailure("source_unavailable", `the url ${url} could not be rendered: ${why}`);
}

/**
 * Fetches the page of a url source through the fetcher, so through the same
 * guard as every sub-resource (each address resolved and checked, the
 * connection pinned to it): every redirect hop comes back here, at most
 * MAX_REDIRECTS, and is checked again; the page is at most MAX_PAGE_BYTES,
 * and all of it within `timeoutMs`. `credentials` go with each hop on
 * their origin, never with a hop on another (see credentials.ts). Returns the HTML with a <base> naming
 * the page's final URL, so that its relative sub-resources resolve as they
 * would in a browser (each of them through the fetcher too).
 */
export async function fetchPage(
  fetcher: SubresourceFetcher | undefined,
  url: string,
  { timeoutMs, signal, credentials }: { timeoutMs: number; signal?: AbortSignal; credentials?: PageCredentials },
): Promise<string> {
  if (!fetcher) throw unavailable(url, "this service fetches nothing from the network");
  const timeout = AbortSignal.timeout(timeoutMs);
  const aborted = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let taken = 0;
  const budget = {
    take: (bytes: number) => {
      taken += bytes;
      if (taken > MAX_PAGE_BYTES) throw unavailable(url, `the page is larger than ${MAX_PAGE_BYTES / 1024 / 1024} MiB`);
    },
  };
  let at = new URL(url);
  for (let hop = 0; ; hop++) {
    // The credentials go to the url's origin only: a hop redirected elsewhere gets none.
    const headers = withCredentials(at, fetcherRequestHeaders({ Accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1" }), credentials);
    const res = await fetcher({ url: at, method: "GET", headers, signal: aborted, budget }).catch((err: unknown) => {
      if (err instanceof RenderFailure) throw err;
      if (timeout.aborted) throw unavailable(url, `it did not answer within ${timeoutMs} ms`);
      throw unavailable(url, err instanceof Error ? err.message : String(err));
    });
    const header = (name: string) => Object.entries(res.headers).find(([key]) => key.toLowerCase() === name)?.[1];
    if (res.status >= 300 && res.status < 400 && header("location")) {
      if (hop >= MAX_REDIRECTS) throw unavailable(url, `more than ${MAX_REDIRECTS} redirects`);
      at = new URL(header("location")!, at);
      if (at.protocol !== "http:" && at.protocol !== "https:") throw unavailable(url, `a redirect to a ${at.protocol} URL`);
      continue;
    }
    if (res.status < 200 || res.status > 299) throw unavailable(url, `it answered HTTP ${res.status}`);
    const type = header("content-type") ?? "";
    if (!HTML_TYPES.test(type)) throw unavailable(url, `it answered ${type || "no content type"}, not an HTML page`);
    let decoded = 0;
    const body = await decodeBody(res.headers, res.body, (bytes) => {
      decoded += bytes;
      if (decoded > MAX_PAGE_BYTES) throw unavailable(url, `the page decodes to more than ${MAX_PAGE_BYTES / 1024 / 1024} MiB`);
    });
    return withBase(decodeText(body, type), at.href);
  }
}

function decodeText(body: Buffer, contentType: string): string {
  const charset = /charset="?([\w-]+)"?/i.exec(contentType)?.[1] ?? "utf-8";
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

/** The page with <base href> first in its head (a base the page names itself comes after and is ignored, as only the first counts). */
export function withBase(html: string, href: string): string {
  const base = `<base href="${href.replace(/&/g, "&amp;").replace(/"/g, "&quot;")}">`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return `${html.slice(0, head.index + head[0].length)}${base}${html.slice(head.index + head[0].length)}`;
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  const at = doctype ? doctype[0].length : 0;
  return `${html.slice(0, at)}${base}${html.slice(at)}`;
}
