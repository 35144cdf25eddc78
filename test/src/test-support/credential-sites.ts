import http from "node:http";
import { listen } from "./hostile";

/** One request a site got: its path and headers. */
export interface SeenRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
}

type Site = Awaited<ReturnType<typeof listen<http.Server>>> & { origin: string; seen: SeenRequest[] };

/**
 * Two local web servers on two ports, so two origins, for url_options: `page` (the url's own
 * origin) answers its private page only to a request that carries `expected` credentials; the
 * page links a stylesheet on its own origin, an image on the other origin, and an image on its
 * own origin that redirects to the other; /hop redirects the page itself to the other origin.
 * Each remembers every request's headers.
 */
export async function credentialSites(
  authorized: (headers: http.IncomingHttpHeaders) => boolean,
): Promise<{ page: Site; other: Site; close(): Promise<void> }> {
  const other = await site((path, res) => {
    if (path === "/landing") return html(res, "<h1>Landing elsewhere</h1>");
    res.writeHead(200, { "content-type": "image/svg+xml" });
    res.end(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>`);
  });
  const page = await site((path, res, req) => {
    if (path === "/hop") {
      res.writeHead(302, { location: `${other.origin}/landing` });
      return res.end();
    }
    if (!authorized(req.headers)) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": 'Basic realm="reports"' });
      return res.end("login required");
    }
    if (path === "/private/report") {
      return html(
        res,
        `<link rel="stylesheet" href="/private/style.css"><h1>Private report</h1><p class="styled">figures</p>` +
          `<img src="${other.origin}/pixel.svg"><img src="/bounce.svg">`,
      );
    }
    if (path === "/private/style.css") {
      res.writeHead(200, { "content-type": "text/css" });
      return res.end(".styled::after { content: ' (private sheet loaded)'; }");
    }
    if (path === "/bounce.svg") {
      res.writeHead(302, { location: `${other.origin}/bounced.svg` });
      return res.end();
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("missing");
  });
  return { page, other, close: async () => void (await Promise.all([page.close(), other.close()])) };
}

function html(res: http.ServerResponse, body: string): void {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(`<!doctype html><html><head><title>Report</title></head><body>${body}</body></html>`);
}

async function site(answer: (path: string, res: http.ServerResponse, req: http.IncomingMessage) => void): Promise<Site> {
  const seen: SeenRequest[] = [];
  const listening = await listen(
    http.createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      seen.push({ path, headers: req.headers });
      answer(path, res, req);
    }),
  );
  return Object.assign(listening, { origin: `http://127.0.0.1:${listening.port}`, seen });
}
