import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { waitFor } from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import { errorShape, type ApiResponse } from "./test-support/api";
import { credentialSites } from "./test-support/credential-sites";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { OtlpReceiver } from "./test-support/otlp-receiver";
import { pdfInfo } from "./test-support/pdf";

/** A Debian tool's stdout and stderr on the PDF in a temporary file. */
function tool(cmd: string, args: (file: string) => string[], pdf: Uint8Array): string {
  const dir = mkdtempSync(path.join(tmpdir(), "pdf-options-"));
  try {
    const file = path.join(dir, "doc.pdf");
    writeFileSync(file, pdf);
    const run = spawnSync(cmd, args(file), { encoding: "utf8" });
    return run.stdout + run.stderr;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const USER_PASSWORD = "e2e-user-pw-7c1f";
const OWNER_PASSWORD = "e2e-owner-pw-93ab";
/** url_options' values, each unique, looked for everywhere they must not be. */
const URL_SECRETS = {
  header: "e2e-url-header-4d1b",
  cookie: "e2e-url-cookie-9a7e",
  scoped: "e2e-url-scoped-2f60",
  password: "e2e-url-basic-b3c8",
  agent: "e2e-url-agent-71d5",
};
const BASIC = `Basic ${Buffer.from(`reporter:${URL_SECRETS.password}`).toString("base64")}`;
const URL_OPTIONS = {
  headers: { "X-Report-Token": URL_SECRETS.header },
  cookies: [
    { name: "session", value: URL_SECRETS.cookie },
    { name: "scoped", value: URL_SECRETS.scoped, path: "/private" },
  ],
  basic_auth: { username: "reporter", password: URL_SECRETS.password },
  user_agent: URL_SECRETS.agent,
};
const HTML = '<html lang="en"><head><title>Statement {{n}}</title></head><body><h1>Statement {{n}}</h1><p>Balance: 12.00</p></body></html>';

/**
 * The PDF options of POST /v1/render through the whole product (gateway → render → storage):
 * each one looked for in the downloaded output itself, each refusal in its three-field error,
 * merged documents with their quota units, and the encryption passwords in no log line, span,
 * JOBS event or job status; a url source's url_options sent to its own origin only, and in no
 * log line, span, JOBS event or job status either.
 */
describe("PDF post-processing and merged documents, end to end", () => {
  const receiver = new OtlpReceiver();
  let h: Harness;
  let nc: NatsConnection;
  let apiKey: string;
  let sites: Awaited<ReturnType<typeof credentialSites>>;

  before(async () => {
    const endpoint = await receiver.start();
    sites = await credentialSites(
      (headers) =>
        headers.authorization === BASIC &&
        headers["x-report-token"] === URL_SECRETS.header &&
        headers["user-agent"] === URL_SECRETS.agent &&
        (headers.cookie ?? "").split("; ").includes(`session=${URL_SECRETS.cookie}`),
    );
    h = await startHarness({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "100" },
      // The two local sites stand in for public ones (loopback is test-only).
      serviceEnv: { render: { RENDER_ALLOW_LOOPBACK: "true", RENDER_SUBRESOURCE_PORTS: `80,443,${sites.page.port},${sites.other.port}` } },
    });
    nc = await connect({ servers: h.stack.natsUrl });
    ({ apiKey } = await h.admin.createKey("pro"));
  });

  after(async () => {
    await nc?.close();
    await h?.stop();
    await receiver.stop();
    await sites?.close();
  });

  const render = (body: Record<string, unknown>): Promise<ApiResponse> => h.api.post("/v1/render", body, { key: apiKey });
  const download = async (response: ApiResponse): Promise<Buffer> => {
    assert.equal(response.status, 200, response.text);
    const url = new URL(response.json.url as string);
    const got = await h.api.get(`${url.pathname}${url.search}`);
    assert.equal(got.status, 200);
    return got.body;
  };
  const refused = (response: ApiResponse, status: number, code: string, message: RegExp) => {
    assert.equal(response.status, status, response.text);
    const error = errorShape(response);
    assert.deepEqual(Object.keys(response.json).sort(), ["code", "error", "hint"]);
    assert.equal(error.code, code);
    assert.match(error.error, message);
  };

  it("metadata: in the information dictionary and the XMP", async () => {
    const pdf = await download(
      await render({
        html: HTML,
        data: { n: 1 },
        options: { metadata: { title: "Statement one", author: "Pressroom", keywords: ["bank", "2026"], creator: "e2e" } },
      }),
    );
    const info = pdfInfo(pdf);
    assert.equal(info.Title, "Statement one");
    assert.equal(info.Author, "Pressroom");
    assert.equal(info.Keywords, "bank, 2026");
    assert.equal(info.Creator, "e2e");
    const xmp = tool("pdfinfo", (f) => ["-meta", f], pdf);
    assert.match(xmp, /<rdf:li xml:lang="x-default">Statement one<\/rdf:li>/);
    assert.match(xmp, /<pdf:Keywords>bank, 2026<\/pdf:Keywords>/);
  });

  it("watermark: selectable text on every page", async () => {
    const pdf = await download(
      await render({ html: `${HTML}<p style="break-before: page">Page two</p>`, data: { n: 2 }, options: { watermark: { text: "DRAFT COPY", angle: 30 } } }),
    );
    const pages = tool("pdftotext", (f) => ["-raw", f, "-"], pdf)
      .split("\f")
      .filter((page) => page.trim());
    assert.equal(pages.length, 2);
    for (const page of pages) assert.match(page, /DRAFT COPY/);
  });

  it("pdfa: PDF/A-2b identification, an sRGB output intent, every font embedded", async () => {
    const pdf = await download(await render({ html: HTML, data: { n: 3 }, options: { pdfa: "PDF/A-2b" } }));
    assert.match(
      tool("pdfinfo", (f) => ["-meta", f], pdf),
      /<pdfaid:part>2<\/pdfaid:part><pdfaid:conformance>B<\/pdfaid:conformance>/,
    );
    assert.match(
      tool("qpdf", (f) => ["--qdf", "--object-streams=disable", f, "-"], pdf),
      /\/S \/GTS_PDFA1/,
    );
    const fonts = tool("pdffonts", (f) => [f], pdf)
      .split("\n")
      .slice(2)
      .filter(Boolean);
    assert.ok(fonts.length > 0);
    for (const font of fonts) assert.match(font, /\syes\s+yes\s+yes\s/, font);
    assert.equal(pdfInfo(pdf).Encrypted, "no");
    assert.equal(pdfInfo(pdf).Title, "Statement 3", "the document's <title> is kept");
  });

  it("outline: bookmarks from the document's headings, kept in a PDF/A document", async () => {
    const html = `${HTML}<h2>Transactions</h2><h1 style="break-before: page">Notes</h1>`;
    const pdf = await download(await render({ html, data: { n: 5 }, options: { outline: true, pdfa: "PDF/A-2b" } }));
    const outlines = JSON.parse(tool("qpdf", (f) => ["--json", "--json-key=outlines", f], pdf)) as { outlines: { title: string; kids: { title: string }[] }[] };
    assert.deepEqual(
      outlines.outlines.map((entry) => [entry.title, entry.kids.map((kid) => kid.title)]),
      [
        ["Statement 5", ["Transactions"]],
        ["Notes", []],
      ],
    );
    const plain = await download(await render({ html, data: { n: 6 } }));
    assert.match(
      tool("qpdf", (f) => ["--json", "--json-key=outlines", f], plain),
      /"outlines": \[\]/,
      "none unless asked",
    );
  });

  it("pdfua: tagged, marked, its language and title shown, XMP pdfuaid", async () => {
    const pdf = await download(await render({ html: HTML, data: { n: 4 }, options: { pdfua: true } }));
    assert.equal(pdfInfo(pdf).Tagged, "yes");
    assert.match(
      tool("pdfinfo", (f) => ["-meta", f], pdf),
      /<pdfuaid:part>1<\/pdfuaid:part>/,
    );
    const qdf = tool("qpdf", (f) => ["--qdf", "--object-streams=disable", f, "-"], pdf);
    assert.match(qdf, /\/DisplayDocTitle true/);
    assert.match(qdf, /\/Lang \(en\)/);
    assert.match(qdf, /\/Marked true/);
  });

  it("pdfua without a title fails the job 422 RENDER_FAILED, saying so", async () => {
    refused(await render({ html: '<html lang="en"><p>untitled</p></html>', data: {}, options: { pdfua: true } }), 422, "RENDER_FAILED", /needs a title/);
  });

  let encryptedJob = "";
  it("encrypt: AES-256 with the permissions asked, opened by the user password", async () => {
    const response = await render({
      html: HTML,
      data: { n: 5 },
      options: {
        encrypt: { user_password: USER_PASSWORD, owner_password: OWNER_PASSWORD, permissions: { print: true, copy: false, modify: false, annotate: false } },
      },
    });
    encryptedJob = response.json.id as string;
    const pdf = await download(response);
    const shown = tool("qpdf", (f) => [`--password=${USER_PASSWORD}`, "--show-encryption", f], pdf);
    assert.match(shown, /R = 6/);
    assert.match(shown, /stream encryption method: AESv3/);
    assert.match(shown, /print high resolution: allowed/);
    assert.match(shown, /extract for any purpose: not allowed/);
    assert.match(
      tool("qpdf", (f) => ["--check", f], pdf),
      /invalid password/,
    );
  });

  /** None of `secrets` in a log line, a span, a JOBS event or the jobs' statuses; the RENDER commands that carried them are gone. */
  async function nowhere(jobIds: string[], secrets: string[]): Promise<void> {
    const statuses = await Promise.all(jobIds.map((id) => h.api.get(`/v1/jobs/${id}`, { key: apiKey })));
    for (const status of statuses) assert.equal(status.json.status, "succeeded", status.text);
    await new Promise((r) => setTimeout(r, 1_000));
    const jsm = await nc.jetstreamManager();
    const events: string[] = [];
    for (let seq = 1; ; seq++) {
      const message = await jsm.streams.getMessage("JOBS", { seq }).catch(() => undefined);
      if (!message) break;
      events.push(Buffer.from(message.data).toString("latin1"));
    }
    for (const id of jobIds)
      assert.ok(
        events.some((e) => e.includes(id)),
        "the job's events were read",
      );
    assert.equal((await jsm.streams.info("RENDER")).state.messages, 0, "the RENDER commands were deleted once rendered");
    const places = {
      "job status": statuses.map((status) => status.text).join("\n"),
      "JOBS events": events.join("\n"),
      spans: receiver.raw.join("\n"),
      logs: h.stack.output(),
    };
    assert.ok(receiver.raw.length > 0 && places.logs.length > 0);
    for (const [where, text] of Object.entries(places)) {
      for (const secret of secrets) assert.ok(!text.includes(secret), `a secret reached the ${where}`);
    }
  }

  it("the passwords never reach a log line, a span, a JOBS event or the job's status", async () => {
    assert.ok(encryptedJob);
    await nowhere([encryptedJob], [USER_PASSWORD, OWNER_PASSWORD]);
  });

  const urlJobs: string[] = [];
  const credentialsIn = (headers: Record<string, unknown>) => JSON.stringify(headers).match(/e2e-url-[a-z]+-[0-9a-f]{4}|Basic /g) ?? [];
  it("url_options: the url's own origin gets the headers, cookies (by path), basic auth and user agent; another origin none, across a redirect too", async () => {
    const url = `${sites.page.origin}/private/report`;
    refused(await render({ url, options: { wait_for: { network_idle: true } } }), 422, "RENDER_FAILED", /answered HTTP 401/);
    const rendered = await render({ url, url_options: URL_OPTIONS, options: { wait_for: { network_idle: true } } });
    const text = tool("pdftotext", (f) => [f, "-"], await download(rendered));
    assert.match(text, /Private report/);
    assert.match(text, /figures \(private sheet loaded\)/, "the stylesheet on the page's origin got the credentials too");
    urlJobs.push(rendered.json.id as string);
    const seen = (path: string) => sites.page.seen.filter((request) => request.path === path).at(-1)?.headers ?? {};
    assert.equal(seen("/private/report").authorization, BASIC);
    assert.equal(seen("/private/style.css")["x-report-token"], URL_SECRETS.header);
    assert.equal(seen("/private/style.css").cookie, `session=${URL_SECRETS.cookie}; scoped=${URL_SECRETS.scoped}`);
    assert.equal(seen("/bounce.svg").cookie, `session=${URL_SECRETS.cookie}`, "a cookie only under its path");
    assert.equal(seen("/bounce.svg")["user-agent"], URL_SECRETS.agent);
    await waitFor(
      "the other origin's image and the redirected one were asked for",
      async () => ["/pixel.svg", "/bounced.svg"].every((p) => sites.other.seen.some((r) => r.path === p)),
      5_000,
    );

    const hopped = await render({ url: `${sites.page.origin}/hop`, url_options: URL_OPTIONS });
    assert.match(
      tool("pdftotext", (f) => [f, "-"], await download(hopped)),
      /Landing elsewhere/,
    );
    urlJobs.push(hopped.json.id as string);
    assert.equal(seen("/hop").authorization, BASIC, "the url's own hop got them");
    const part = await render({ documents: [{ url, url_options: URL_OPTIONS }, { html: "<p>cover</p>" }] });
    assert.match(
      tool("pdftotext", (f) => [f, "-"], await download(part)),
      /Private report/,
    );
    urlJobs.push(part.json.id as string);
    const shot = await h.api.post("/v1/image", { url, url_options: URL_OPTIONS, options: { width: 400, height: 300 } }, { key: apiKey });
    assert.equal(shot.status, 200, shot.text);
    urlJobs.push(shot.json.id as string);

    assert.deepEqual(
      sites.other.seen.map((request) => [request.path, credentialsIn(request.headers)]),
      sites.other.seen.map((request) => [request.path, []]),
      "no request to the other origin carried a credential",
    );
    for (const request of sites.other.seen)
      assert.ok(!request.headers.authorization && !request.headers.cookie && !request.headers["x-report-token"], request.path);
    assert.ok(sites.other.seen.some((request) => request.path === "/landing"));
  });

  it("url_options never reach a log line, a span, a JOBS event or the job's status", async () => {
    assert.equal(urlJobs.length, 4);
    await nowhere(urlJobs, [...Object.values(URL_SECRETS), BASIC.slice("Basic ".length)]);
  });

  it("documents: parts rendered with their own page options and merged in order, one quota unit each", async () => {
    const before = (await h.api.get("/v1/keys/usage", { key: apiKey })).json.renders.used as number;
    const response = await render({
      data: {},
      documents: [
        { html: "<h1>Cover {{who}}</h1>", data: { who: "Ada" }, options: { format: "A5" } },
        { template_id: "invoice", data: (await h.api.get("/v1/templates")).json.templates.find((t: { id: string }) => t.id === "invoice").sample_data },
        { html: "<p>Appendix</p><p style='break-before: page'>Appendix two</p>", options: { format: "Letter", landscape: true } },
      ],
      options: { metadata: { title: "Bundle" }, watermark: { text: "BUNDLE" } },
    });
    const pdf = await download(response);
    const pages = tool("pdftotext", (f) => ["-raw", f, "-"], pdf).split("\f");
    assert.ok(pages.length >= 4);
    assert.match(pages[0]!, /Cover Ada/);
    assert.match(pages.at(-3)!, /Appendix/);
    // At 45 degrees pdftotext puts each letter of the stamp on a line of its own, in order.
    for (const page of pages.filter((p) => p.trim())) assert.match(page.replace(/\s+/g, ""), /BUNDLE/);
    const sizes = tool("pdfinfo", (f) => ["-f", "1", "-l", "99", f], pdf);
    assert.match(sizes, /Page\s+1 size:\s+4(19|20)(\.\d+)? x 595\.\d+ pts/, "A5 first");
    assert.match(sizes, /size:\s+792 x 612 pts/, "Letter landscape last");
    assert.equal(pdfInfo(pdf).Title, "Bundle");
    const job = (await h.api.get(`/v1/jobs/${response.json.id}`, { key: apiKey })).json;
    assert.equal(job.status, "succeeded");
    await waitFor("the slot freed", async () => (await h.api.get("/v1/keys/usage", { key: apiKey })).json.concurrency.in_flight === 0, 10_000);
    assert.equal((await h.api.get("/v1/keys/usage", { key: apiKey })).json.renders.used, before + 3, "three parts, three units");
  });

  it("documents: a failing part fails the job naming its index; the document's fault is charged", async () => {
    const before = (await h.api.get("/v1/keys/usage", { key: apiKey })).json.renders.used as number;
    const response = await render({
      data: {},
      documents: [{ html: "<p>fine</p>" }, { html: "<script>throw new Error('broken part')</script>" }],
    });
    refused(response, 422, "RENDER_FAILED", /^documents\[1\]: .*broken part/);
    await waitFor("the slot freed", async () => (await h.api.get("/v1/keys/usage", { key: apiKey })).json.concurrency.in_flight === 0, 10_000);
    assert.equal((await h.api.get("/v1/keys/usage", { key: apiKey })).json.renders.used, before + 2);
  });

  it("documents: the units are admitted all or none", async () => {
    const small = await h.admin.createKey("free");
    await h.admin.setUsed(small.keyId, "free", 98);
    const three = await h.api.post("/v1/render", { data: {}, documents: [{ html: "a" }, { html: "b" }, { html: "c" }] }, { key: small.apiKey });
    refused(three, 429, "QUOTA_EXCEEDED", /quota/i);
    const usage = (await h.api.get("/v1/keys/usage", { key: small.apiKey })).json;
    assert.equal(usage.renders.used, 98, "nothing taken by the refusal");
    const two = await h.api.post("/v1/render", { data: {}, documents: [{ html: "a" }, { html: "b" }] }, { key: small.apiKey });
    assert.equal(pdfInfo(await download(two)).Pages, "2");
    assert.equal((await h.api.get("/v1/keys/usage", { key: small.apiKey })).json.renders.used, 100);
  });

  it("refusals answer their three-field error", async () => {
    const encrypt = { owner_password: OWNER_PASSWORD, permissions: { print: true, copy: true, modify: true, annotate: true } };
    refused(
      await render({ html: "x", data: {}, options: { pdfa: "PDF/A-2b", encrypt } }),
      422,
      "PAYLOAD_INVALID",
      /^options\.encrypt: PDF\/A does not allow encryption/,
    );
    refused(await render({ html: "x", data: {}, options: { pdfa: "PDF/A-1b", pdfua: true } }), 422, "PAYLOAD_INVALID", /^options\.pdfua: PDF\/A and PDF\/UA/);
    refused(await render({ html: "x", data: {}, options: { pdfa: "PDF/A-4" } }), 422, "PAYLOAD_INVALID", /^options\.pdfa: must be one of/);
    refused(await render({ html: "x", data: {}, options: { watermark: { text: "x", opacity: 3 } } }), 422, "PAYLOAD_INVALID", /^options\.watermark\.opacity/);
    refused(await render({ data: {}, documents: [] }), 422, "PAYLOAD_INVALID", /^documents: must have at least one part/);
    const url = "https://example.com/report";
    refused(await render({ url, url_options: { headers: { Host: "x" } } }), 422, "PAYLOAD_INVALID", /^url_options\.headers\.Host: is set from the url$/);
    refused(
      await render({ url, url_options: { headers: { "X-A": `${URL_SECRETS.header}\r\nX-B: 1` } } }),
      422,
      "PAYLOAD_INVALID",
      /^url_options\.headers\.X-A: must not contain line breaks/,
    );
    refused(await render({ html: "x", data: {}, url_options: { user_agent: "x" } }), 422, "PAYLOAD_INVALID", /^url_options: applies to a url source only$/);
    const parts = Array.from({ length: 21 }, () => ({ html: "x" }));
    refused(await render({ data: {}, documents: parts }), 422, "PAYLOAD_INVALID", /^documents: must have at most 20 parts/);
    refused(await render({ data: {}, documents: [{ html: "x" }], options: { format: "A4" } }), 422, "PAYLOAD_INVALID", /^options\.format: applies to one part/);
    refused(await render({ data: {}, documents: [{ html: "x" }], options: { pdfua: true } }), 422, "PAYLOAD_INVALID", /^options\.pdfua: a merged document/);
    refused(
      await render({ data: {}, documents: [{ html: "x" }, { template_id: "no-such-template", data: {} }] }),
      404,
      "TEMPLATE_NOT_FOUND",
      /^documents\[1\]: /,
    );
  });

  endOfSuiteChecks(() => h);
});
