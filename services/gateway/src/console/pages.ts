import { randomBytes } from "node:crypto";
import path from "node:path";
import type { PageRoute } from "../route";
import { CSS, JS, StaticAssets, sendPage } from "../static-pages";

/**
 * The console's pages: one HTML shell for every path under /console (the app, built from web/ by
 * the gateway's build into dist/console/assets, routes in the browser), and its files. The app
 * calls the same /v1 operations as every client, with the session cookie.
 */

/**
 * The gallery's policy (nothing but this origin, no inline script) with three additions: previews
 * fetched by the page are shown from blob: URLs, CodeMirror draws its lint markers as data: SVG
 * images, and CodeMirror's own stylesheet, which it writes into a <style> element, carries this
 * response's nonce (and nothing else inline may).
 */
export function consoleCsp(nonce: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' blob: data:",
    "frame-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const BUILT = path.join(__dirname, "assets");
const FILES = {
  "console.js": { file: path.join(BUILT, "console.js"), type: JS },
  "console.css": { file: path.join(BUILT, "console.css"), type: CSS },
};

const shell = (nonce: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Console · Pressroom</title>
<meta name="style-nonce" content="${nonce}">
<link rel="stylesheet" href="/assets/pages.css">
<link rel="stylesheet" href="/console/assets/console.css">
<script type="module" src="/console/assets/console.js"></script>
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
<header class="site">
<a class="brand" href="/">Pressroom</a>
<nav aria-label="Main"><ul>
<li><a href="/">Templates</a></li>
<li><a href="/docs">API reference</a></li>
<li><a href="/v1/openapi.json">OpenAPI document</a></li>
<li><a href="/console" aria-current="page">Console</a></li>
</ul></nav>
</header>
<div id="app"><main id="content" class="page"><h1>Console</h1><noscript><p>The console needs JavaScript; everything it shows is also in the API (<a href="/docs">API reference</a>).</p></noscript></main></div>
</body>
</html>
`;

export function consolePages(): PageRoute[] {
  const assets = new StaticAssets(FILES);
  const page = (ctx: Parameters<PageRoute["handler"]>[0]) => {
    const nonce = randomBytes(16).toString("base64");
    sendPage(ctx, shell(nonce), consoleCsp(nonce), 200, "no-store");
  };
  return [
    { method: "GET", path: "/console", handler: page },
    { method: "GET", path: "/console/assets/:name", handler: assets.route() },
    { method: "GET", path: "/console/*page", handler: page },
  ];
}
