import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { listen } from "./test-support/hostile";
import { pdfText } from "./test-support/pdf";

/**
 * Documents that try to reach private addresses, sent to the running service
 * as customers would send them, in the production network policy (no
 * test-only allowance): each renders without reaching anything private, and
 * the same render process serves an ordinary document after. The limits a
 * document can hit are held by hostile-documents.e2e.test.ts.
 */
describe("documents reaching for private addresses through POST /v1/render", () => {
  let h: Harness;
  let key: string;
  let secret: Awaited<ReturnType<typeof listen<http.Server>>>;
  const SECRET = `secret-${randomBytes(8).toString("hex")}`;
  const secretHits: string[] = [];

  before(async () => {
    secret = await listen(
      http.createServer((req, res) => {
        secretHits.push(`${req.method} ${req.url}`);
        res.writeHead(200, { "content-type": "text/html", "access-control-allow-origin": "*" });
        res.end(`<p>${SECRET}</p>`);
      }),
    );
    // The secret server's port is allowed, so what refuses each request is the address guard.
    h = await startHarness({ env: { RENDER_SLOTS: "1" }, serviceEnv: { render: { RENDER_SUBRESOURCE_PORTS: `80,443,${secret.port}` } } });
    ({ apiKey: key } = await h.admin.createKey("business"));
  });
  after(async () => {
    await h?.stop();
    await secret?.close();
  });

  const reach = (url: string) => `<img src="${url}/img"><iframe src="${url}/frame"></iframe><link rel="stylesheet" href="${url}/css">
    <p id="out">start</p><script>fetch("${url}/fetch").then((r) => r.text()).then((t) => out.textContent = t, () => out.textContent = "refused")</script>`;

  const corpus: { name: string; html: () => string }[] = [
    { name: "requests to 127.0.0.1", html: () => reach(`http://127.0.0.1:${secret.port}`) },
    { name: "requests to [::ffff:127.0.0.1]", html: () => reach(`http://[::ffff:127.0.0.1]:${secret.port}`) },
    { name: "requests to localhost", html: () => reach(`https://localhost:${secret.port}`) },
    { name: "requests to 169.254.169.254", html: () => reach("http://169.254.169.254/latest/meta-data") },
  ];

  it("reaches nothing private, on the same render process throughout", async () => {
    const render = h.stack.services.processes.get("render")!;
    const pid = render.child.pid;
    for (const doc of corpus) {
      const response = await h.api.post("/v1/render", { html: doc.html(), data: {} }, { key });
      assert.equal(response.status, 200, `${doc.name}: ${response.text}`);
      assert.doesNotMatch(pdfText((await h.api.download(response.json.url)).body), new RegExp(SECRET), doc.name);
    }
    assert.deepEqual(secretHits, [], "no document reached the private server");

    const ordinary = await h.api.post("/v1/render", { html: "<p>Invoice {{n}}</p>", data: { n: 42 } }, { key });
    assert.equal(ordinary.status, 200, ordinary.text);
    assert.match(pdfText((await h.api.download(ordinary.json.url)).body), /Invoice 42/);
    assert.equal(render.child.pid, pid);
    assert.equal(render.child.exitCode, null, "the render process is still running");
  });

  endOfSuiteChecks(() => h);
});

/**
 * Nothing carries from one customer's job to the next. The render pool runs
 * with one slot, so the second job gets the very page the first one used;
 * the test-only settings let documents reach a test HTTPS origin on loopback.
 */
describe("isolation between jobs through the service", () => {
  let h: Harness;
  let key: string;
  let dir: string;
  let origin: Awaited<ReturnType<typeof listen<https.Server>>>;
  /** Every request the test origin got, with the job it came from and the cookies it carried. */
  const seen: { job: number; path: string; cookie: string }[] = [];
  let job = 0;

  const FRAME = `<!doctype html><p id="out">frame</p><script>
    const was = "cookie=[" + document.cookie + "]";
    document.cookie = "fromscript=job1; Secure; SameSite=None; Path=/";
    out.textContent = "frame " + was;
  </script>`;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "pressroom-isolation-"));
    const [keyFile, certFile] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")];
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost",
        "-days",
        "1",
        "-keyout",
        keyFile,
        "-out",
        certFile,
      ],
      { stdio: "ignore" },
    );
    origin = await listen(
      https.createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
        seen.push({ job, path: req.url ?? "", cookie: req.headers.cookie ?? "" });
        if (req.url?.startsWith("/set.js")) {
          res.writeHead(200, { "content-type": "text/javascript", "set-cookie": "tracker=job1; Secure; SameSite=None; Path=/; Max-Age=86400" });
          res.end("document.title = 'set';");
        } else if (req.url?.startsWith("/frame")) {
          res.writeHead(200, { "content-type": "text/html" });
          res.end(FRAME);
        } else {
          res.writeHead(200, { "content-type": "image/svg+xml", "cache-control": "max-age=86400" });
          res.end('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>');
        }
      }),
    );
    h = await startHarness({
      env: { RENDER_SLOTS: "1" },
      serviceEnv: { render: { RENDER_ALLOW_LOOPBACK: "true", RENDER_EXTRA_CA_FILE: certFile, RENDER_SUBRESOURCE_PORTS: `443,${origin.port}` } },
    });
    ({ apiKey: key } = await h.admin.createKey("business"));
  });
  after(async () => {
    await h?.stop();
    await origin?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const READ = `<p id="doc"></p><script>
    doc.textContent = "document cookie=[" + document.cookie + "] local=" + localStorage.length + " session=" + sessionStorage.length + " name=[" + window.name + "]";
  </script>`;

  it("a document that writes cookies and storage leaves nothing for the next job's document", async () => {
    const o = `https://localhost:${origin.port}`;
    job = 1;
    const first = await h.api.post(
      "/v1/render",
      {
        html: `${READ}<script src="${o}/set.js"></script><script>
          document.cookie = "mine=job1; Secure; Path=/"; localStorage.setItem("k", "job1"); sessionStorage.setItem("k", "job1"); window.name = "job1";
        </script><img src="${o}/pixel.svg"><iframe src="${o}/frame1"></iframe>`,
        data: {},
      },
      { key },
    );
    assert.equal(first.status, 200, first.text);
    // The writes took effect within the first job: its frame was sent the cookie that set.js's response set.
    assert.equal(seen.find((r) => r.path === "/frame1")?.cookie, "tracker=job1");

    job = 2;
    const second = await h.api.post("/v1/render", { html: `${READ}<img src="${o}/pixel.svg"><iframe src="${o}/frame2"></iframe>`, data: {} }, { key });
    assert.equal(second.status, 200, second.text);
    const text = pdfText((await h.api.download(second.json.url)).body);
    assert.match(text, /document cookie=\[\] local=0 session=0 name=\[\]/);
    assert.match(text, /frame cookie=\[\]/);
    const secondJob = seen.filter((r) => r.job === 2);
    // Nothing came from a cache (the pixel and the frame were fetched again) and no request carried a cookie.
    assert.deepEqual(secondJob.map((r) => r.path).sort(), ["/frame2", "/pixel.svg"]);
    assert.deepEqual(
      secondJob.map((r) => r.cookie),
      ["", ""],
    );
  });

  endOfSuiteChecks(() => h);
});
