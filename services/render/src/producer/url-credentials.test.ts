import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { pageCredentials, type RenderEngine } from "../engine";
import { pdfText, startEngine } from "../test-support/engine";
import { createSubresourceFetcher } from "./subresources";

/** A local site remembering each request's path and headers. */
async function site(answer: (path: string, res: http.ServerResponse) => void) {
  const seen: { path: string; headers: http.IncomingHttpHeaders }[] = [];
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    seen.push({ path, headers: req.headers });
    answer(path, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, origin: `http://127.0.0.1:${port}`, seen };
}

const page = (res: http.ServerResponse, body: string) => {
  res.writeHead(200, { "content-type": "text/html" });
  res.end(`<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`);
};

/** url_options on real Chromium and two local origins (two ports): only the url's own origin gets them. */
describe("render engine: a url source's credentials", () => {
  let engine: RenderEngine;
  let own: Awaited<ReturnType<typeof site>>;
  let other: Awaited<ReturnType<typeof site>>;
  before(async () => {
    other = await site((path, res) => {
      if (path === "/landing") return page(res, "<p>landed elsewhere</p>");
      res.writeHead(200, { "content-type": "image/svg+xml" });
      res.end(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`);
    });
    own = await site((path, res) => {
      if (path === "/report") return page(res, `<p>own report</p><img src="/reports/a.svg"><img src="${other.origin}/b.svg"><img src="/away.svg">`);
      if (path === "/hop") return void res.writeHead(302, { location: `${other.origin}/landing` }).end();
      if (path === "/away.svg") return void res.writeHead(302, { location: `${other.origin}/c.svg` }).end();
      res.writeHead(200, { "content-type": "image/svg+xml" });
      res.end(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`);
    });
    const fetcher = createSubresourceFetcher({ allowLoopback: true, ports: [own.port, other.port] });
    engine = await startEngine({ slots: 1, fetchSubresource: fetcher });
  });
  after(async () => {
    await engine.close();
    await Promise.all([own, other].map(({ server }) => new Promise((resolve) => server.close(resolve))));
  });

  const options = {
    headers: { "X-Token": "t0k3n" },
    cookies: [
      { name: "session", value: "s1" },
      { name: "scoped", value: "s2", path: "/reports" },
    ],
    basicAuth: { username: "ada", password: "pw" },
    userAgent: "ReportBot/1.0",
  };
  const basic = `Basic ${Buffer.from("ada:pw").toString("base64")}`;

  it("sends them with the page and its sub-resources on its origin, none to another origin or across a redirect to it", async () => {
    const credentials = pageCredentials(`${own.origin}/report`, options);
    const html = await engine.fetchPage(`${own.origin}/report`, { timeoutMs: 5_000, credentials });
    const out = await engine.render({ kind: "pdf", html, credentials, options: { waitFor: { networkIdle: true } } });
    assert.match(pdfText(out.data), /own report/);
    const headersOf = (path: string) => own.seen.find((request) => request.path === path)?.headers;
    for (const path of ["/report", "/reports/a.svg", "/away.svg"]) {
      const headers = headersOf(path);
      assert.ok(headers, `${path} was asked for`);
      assert.equal(headers["x-token"], "t0k3n", path);
      assert.equal(headers.authorization, basic, path);
      assert.equal(headers["user-agent"], "ReportBot/1.0", path);
    }
    assert.equal(headersOf("/report")!.cookie, "session=s1");
    assert.equal(headersOf("/reports/a.svg")!.cookie, "session=s1; scoped=s2");
    const hopped = await engine.fetchPage(`${own.origin}/hop`, { timeoutMs: 5_000, credentials: pageCredentials(`${own.origin}/hop`, options) });
    assert.match(hopped, /landed elsewhere/);
    assert.equal(headersOf("/hop")!.authorization, basic);
    assert.deepEqual(other.seen.map((request) => request.path).sort(), ["/b.svg", "/c.svg", "/landing"]);
    for (const { path, headers } of other.seen) {
      assert.deepEqual([headers["x-token"], headers.authorization, headers.cookie], [undefined, undefined, undefined], path);
      assert.notEqual(headers["user-agent"], "ReportBot/1.0", path);
    }
  });
});
