import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { deflateSync, crc32 } from "node:zlib";
import { status as GrpcStatus, type ServiceError } from "@grpc/grpc-js";
import { accountEventsV1, type renderV1 } from "@pressroom/contracts";
import { Pressroom } from "@pressroom/client";
import { streams } from "@pressroom/platform";
import { DEMO_API_KEY } from "@pressroom/domain";
import { distinctFreePorts, serviceEnv, startService, stopChild, waitReady, type ServiceProcess } from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import { Api, errorShape, type ApiResponse } from "./test-support/api";
import { clientsAs, endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { assertPageSize, pdfFonts, pdfText, pngSize } from "./test-support/pdf";

/**
 * Customers' own templates over HTTP against the whole running system, two
 * accounts side by side: create, version, pin, preview, delete, with their
 * own assets (a font embedded in the PDF, an image, a stylesheet), the
 * validation and preview rules, plan limits, isolation (another account's
 * template answers exactly like one that does not exist) and the audit events.
 */

const FONT = readFileSync("/usr/share/fonts/truetype/dejavu/DejaVuSans-ExtraLight.ttf");

/** A solid PNG, 3 × 2 unless told. */
function tinyPng(width = 3, height = 2): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), ...Array.from({ length: width }, () => Buffer.from([200, 30, 30]))]);
  const rows = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function expectError(response: ApiResponse, status: number, code: string): { error: string; code: string; hint: string } {
  assert.equal(response.status, status, `expected ${status} ${code}, got ${response.status} ${response.text}`);
  const body = errorShape(response);
  assert.equal(body.code, code, response.text);
  return body;
}

const letter = (html: string, extra: Record<string, unknown> = {}) => ({
  name: "Letter",
  output: "pdf",
  html,
  data_schema: { type: "object", properties: { who: { type: "string" } }, required: ["who"] },
  sample_data: { who: "Sample" },
  ...extra,
});

describe("own templates over HTTP (full stack, two accounts)", () => {
  let h: Harness;
  let nc: NatsConnection;
  let a: { apiKey: string; keyId: string };
  let b: { apiKey: string; keyId: string };
  /** A second gateway on the same services: a new version must be used there at once too. */
  let second: Api;
  let secondGateway: ServiceProcess | undefined;
  let workDir: string;

  async function accountEvents(keyId: string): Promise<accountEventsV1.AccountEvent[]> {
    const jsm = await nc.jetstreamManager();
    const events: accountEventsV1.AccountEvent[] = [];
    const info = await jsm.streams.info(streams.ACCOUNTS);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(streams.ACCOUNTS, { seq }).catch(() => undefined);
      if (!message) continue;
      const event = accountEventsV1.AccountEvent.decode(message.data);
      if (event.keyId === keyId) events.push(event);
    }
    return events;
  }

  async function renderText(key: string, body: Record<string, unknown>): Promise<{ response: ApiResponse; text: string }> {
    const response = await h.api.post("/v1/render", body, { key });
    assert.equal(response.status, 200, response.text);
    const download = await h.api.download(response.json.url);
    return { response, text: pdfText(download.body) };
  }

  before(async () => {
    h = await startHarness();
    nc = await connect({ servers: h.stack.natsUrl });
    a = await h.admin.createKey("business");
    b = await h.admin.createKey("business");
    workDir = mkdtempSync(path.join(tmpdir(), "pressroom-own-templates-"));
    const [http, health] = (await distinctFreePorts(2)) as [number, number];
    const ports = { http, grpc: h.stack.ports.grpc, health: { ...h.stack.ports.health, gateway: health } };
    const env = serviceEnv("gateway", {
      databaseUrls: h.stack.databaseUrls,
      natsUrl: h.stack.natsUrl,
      ports,
      logDir: workDir,
      certificates: h.stack.certificates,
      sealingKey: h.stack.sealingKey,
      destinationSealingKey: h.stack.destinationSealingKey,
      publicBaseUrl: h.stack.baseUrl,
      env: { LOG_LEVEL: "info" },
    });
    secondGateway = startService("gateway", env, path.join(workDir, "gateway-b"));
    await waitReady("gateway", health, secondGateway.child);
    second = new Api(`http://127.0.0.1:${http}`);
  });

  after(async () => {
    if (secondGateway) await stopChild(secondGateway.child, "SIGTERM", 10_000);
    if (workDir) rmSync(workDir, { recursive: true, force: true });
    await nc?.close();
    await h?.stop();
  });

  describe("create, read, version, pin", () => {
    it("creates a private template: 201, the catalog's entry shape, visibility private, version 1", async () => {
      const created = await h.api.post("/v1/templates", { id: "welcome", ...letter("<h1>Hello {{who}}, version one</h1>") }, { key: a.apiKey });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(
        { ...created.json, data_schema: undefined, sample_data: undefined },
        {
          id: "welcome",
          version: 1,
          name: "Letter",
          description: "",
          output: "pdf",
          page: { format: "A4", landscape: false, margin: { top: "1cm", right: "1cm", bottom: "1cm", left: "1cm" }, header: false, footer: false },
          data_schema: undefined,
          sample_data: undefined,
          preview_url: "/v1/templates/welcome/versions/1/preview.png",
          visibility: "private",
        },
      );
      const current = await h.api.get("/v1/templates/welcome", { key: a.apiKey });
      assert.equal(current.status, 200, current.text);
      assert.equal(current.json.version, 1);
    });

    it("lists own templates with the key only, beside the public catalog", async () => {
      const withKey = await h.api.get("/v1/templates", { key: a.apiKey });
      assert.equal(withKey.status, 200, withKey.text);
      const own = withKey.json.templates.filter((t: { visibility: string }) => t.visibility === "private");
      assert.deepEqual(
        own.map((t: { id: string }) => t.id),
        ["welcome"],
      );
      assert.ok(withKey.json.templates.some((t: { id: string; visibility: string }) => t.id === "invoice" && t.visibility === "public"));
      assert.match(withKey.headers["cache-control"] ?? "", /private|no-store/);
      const anonymous = await h.api.get("/v1/templates");
      assert.ok(anonymous.json.templates.every((t: { visibility: string }) => t.visibility === "public"));
      const other = await h.api.get("/v1/templates", { key: b.apiKey });
      assert.ok(!other.json.templates.some((t: { id: string }) => t.id === "welcome"));
    });

    it("renders it by id; PUT makes version 2, used by the very next render; a pin renders version 1", async () => {
      const first = await renderText(a.apiKey, { template_id: "welcome", data: { who: "Ada" } });
      assert.match(first.text, /Hello Ada, version one/);
      const replaced = await h.api.request("PUT", "/v1/templates/welcome", { key: a.apiKey, json: letter("<h1>Hello {{who}}, version two</h1>") });
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal(replaced.json.version, 2);
      const next = await renderText(a.apiKey, { template_id: "welcome", data: { who: "Ada" } });
      assert.match(next.text, /Hello Ada, version two/);
      const pinned = await renderText(a.apiKey, { template_id: "welcome", template_version: 1, data: { who: "Ada" } });
      assert.match(pinned.text, /Hello Ada, version one/);
      const job = await h.api.get(`/v1/jobs/${pinned.response.json.id}`, { key: a.apiKey });
      assert.equal(job.json.template_version, 1);
      assert.equal((await h.api.get(`/v1/jobs/${next.response.json.id}`, { key: a.apiKey })).json.template_version, 2);
      expectError(
        await h.api.post("/v1/render", { template_id: "welcome", template_version: 7, data: { who: "x" } }, { key: a.apiKey }),
        404,
        "TEMPLATE_VERSION_NOT_FOUND",
      );
      expectError(await h.api.post("/v1/render", { template_id: "welcome", data: {} }, { key: a.apiKey }), 422, "PAYLOAD_INVALID");
    });

    it("a new version is used by the next render on every gateway at once", async () => {
      // Both gateways have rendered version 2; version 3 is made through the first and rendered at once through the second.
      const before = await second.post("/v1/render", { template_id: "welcome", data: { who: "Ada" } }, { key: a.apiKey });
      assert.equal(before.status, 200, before.text);
      const replaced = await h.api.request("PUT", "/v1/templates/welcome", { key: a.apiKey, json: letter("<h1>Hello {{who}}, version three</h1>") });
      assert.equal(replaced.json.version, 3, replaced.text);
      const after = await second.post("/v1/render", { template_id: "welcome", data: { who: "Ada" } }, { key: a.apiKey });
      assert.equal(after.status, 200, after.text);
      assert.match(pdfText((await h.api.download(after.json.url)).body), /Hello Ada, version three/);
      assert.equal((await second.get(`/v1/jobs/${after.json.id}`, { key: a.apiKey })).json.template_version, 3);
    });

    it("lists versions newest first and reads each", async () => {
      const versions = await h.api.get("/v1/templates/welcome/versions", { key: a.apiKey });
      assert.equal(versions.status, 200, versions.text);
      assert.deepEqual(
        versions.json.versions.map((v: { version: number }) => v.version),
        [3, 2, 1],
      );
      for (const v of versions.json.versions) assert.ok(!Number.isNaN(Date.parse(v.created_at)));
      const one = await h.api.get("/v1/templates/welcome/versions/1", { key: a.apiKey });
      assert.equal(one.status, 200, one.text);
      assert.equal(one.json.version, 1);
      expectError(await h.api.get("/v1/templates/welcome/versions/4", { key: a.apiKey }), 404, "TEMPLATE_VERSION_NOT_FOUND");
    });

    it("lists a public template's versions with a key as without one", async () => {
      const anonymous = await h.api.get("/v1/templates/invoice/versions");
      assert.equal(anonymous.status, 200, anonymous.text);
      assert.ok(anonymous.json.versions.length >= 1);
      const keyed = await h.api.get("/v1/templates/invoice/versions", { key: a.apiKey });
      assert.equal(keyed.status, 200, keyed.text);
      assert.deepEqual(keyed.json, anonymous.json);
    });

    it("a merged document's parts render own templates at the version admitted, pinned or current; another account's is not found", async () => {
      const merged = await renderText(a.apiKey, {
        data: {},
        documents: [
          { template_id: "welcome", template_version: 1, data: { who: "Pinned" } },
          { template_id: "welcome", data: { who: "Current" } },
        ],
      });
      assert.match(merged.text, /Hello Pinned, version one[\s\S]*Hello Current, version three/);
      const missing = await h.api.post(
        "/v1/render",
        { data: {}, documents: [{ html: "<p>x</p>" }, { template_id: "welcome", data: { who: "x" } }] },
        { key: b.apiKey },
      );
      expectError(missing, 404, "TEMPLATE_NOT_FOUND");
      assert.match(missing.json.error, /^documents\[1\]: /);
    });

    it("409 TEMPLATE_EXISTS for a public id and for the account's own id; another account may use the same id", async () => {
      expectError(await h.api.post("/v1/templates", { id: "invoice", ...letter("<p>x</p>") }, { key: a.apiKey }), 409, "TEMPLATE_EXISTS");
      expectError(await h.api.post("/v1/templates", { id: "welcome", ...letter("<p>x</p>") }, { key: a.apiKey }), 409, "TEMPLATE_EXISTS");
      const theirs = await h.api.post("/v1/templates", { id: "welcome", ...letter("<h1>B's own {{who}}</h1>") }, { key: b.apiKey });
      assert.equal(theirs.status, 201, theirs.text);
      assert.match((await renderText(b.apiKey, { template_id: "welcome", data: { who: "Bo" } })).text, /B's own Bo/);
      assert.match((await renderText(a.apiKey, { template_id: "welcome", data: { who: "Ada" } })).text, /Hello Ada, version three/);
    });
  });

  describe("isolation", () => {
    it("only the gateway's certificate may save or delete a template over gRPC (mutual TLS, per-method callers)", async () => {
      const codeOf = (call: (cb: (err: ServiceError | null) => void) => unknown) =>
        new Promise<number>((resolve) => call((err) => resolve(err ? err.code : GrpcStatus.OK)));
      for (const peer of ["storage", "webhook", "metering", "admin"] as const) {
        const clients = clientsAs(h.stack, peer);
        try {
          const save: renderV1.SaveTemplateRequest = {
            owner: a.keyId,
            replace: false,
            template: undefined,
            html: "<p>x</p>",
            assets: {},
            checkOnly: false,
            maxTemplates: 1000,
            plan: "business",
          };
          assert.equal(await codeOf((cb) => clients.catalog.saveTemplate(save, cb)), GrpcStatus.PERMISSION_DENIED, `${peer} saves`);
          assert.equal(
            await codeOf((cb) => clients.catalog.deleteTemplate({ owner: a.keyId, id: "welcome" }, cb)),
            GrpcStatus.PERMISSION_DENIED,
            `${peer} deletes`,
          );
        } finally {
          clients.close();
        }
      }
    });

    it("another account's template answers exactly like an id that does not exist, on every route", async () => {
      const created = await h.api.post("/v1/templates", { id: "secret-a", ...letter("<p>{{who}}</p>") }, { key: a.apiKey });
      assert.equal(created.status, 201, created.text);
      const attempts: [string, string, unknown?][] = [
        ["GET", "/v1/templates/ID"],
        ["GET", "/v1/templates/ID/versions"],
        ["GET", "/v1/templates/ID/versions/1"],
        ["GET", "/v1/templates/ID/preview.png"],
        ["GET", "/v1/templates/ID/versions/1/preview.png"],
        ["PUT", "/v1/templates/ID", letter("<p>{{who}}</p>")],
        ["DELETE", "/v1/templates/ID"],
      ];
      for (const [method, path, json] of attempts) {
        const theirs = await h.api.request(method, path.replace("ID", "secret-a"), { key: b.apiKey, json });
        const none = await h.api.request(method, path.replace("ID", "secret-z"), { key: b.apiKey, json });
        const theirsBody = expectError(theirs, 404, "TEMPLATE_NOT_FOUND");
        const noneBody = expectError(none, 404, "TEMPLATE_NOT_FOUND");
        assert.deepEqual(
          { ...theirsBody, error: theirsBody.error.replace("secret-a", "") },
          { ...noneBody, error: noneBody.error.replace("secret-z", "") },
          `${method} ${path}`,
        );
      }
      for (const endpoint of ["/v1/render"]) {
        const theirs = expectError(await h.api.post(endpoint, { template_id: "secret-a", data: { who: "x" } }, { key: b.apiKey }), 404, "TEMPLATE_NOT_FOUND");
        const none = expectError(await h.api.post(endpoint, { template_id: "secret-z", data: { who: "x" } }, { key: b.apiKey }), 404, "TEMPLATE_NOT_FOUND");
        assert.equal(theirs.error.replace("secret-a", ""), none.error.replace("secret-z", ""));
      }
      expectError(await h.api.get("/v1/templates/secret-a"), 404, "TEMPLATE_NOT_FOUND");
      assert.equal((await h.api.get("/v1/templates/secret-a", { key: a.apiKey })).status, 200);
    });
  });

  describe("assets, png and previews", () => {
    it("serves assets from the template: the font is embedded in the PDF, the image and the stylesheet load; its owner reads its source and its assets' names", async () => {
      const html =
        '<link rel="stylesheet" href="assets/style.css"><style>@font-face{font-family:Brand;src:url(assets/brand.ttf)}</style>' +
        '<p style="font-family:Brand">Branded {{who}}</p><p id="s">image missing</p>' +
        "<img src=\"assets/logo.png\" onload=\"document.getElementById('s').textContent='image '+this.naturalWidth+'x'+this.naturalHeight\">";
      const assets = {
        "brand.ttf": FONT.toString("base64"),
        "logo.png": tinyPng().toString("base64"),
        "style.css": Buffer.from('body::after{content:"stylesheet applied"}').toString("base64"),
      };
      const created = await h.api.post("/v1/templates", { id: "branded", ...letter(html), assets }, { key: a.apiKey });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.json.html, undefined, "the save's answer carries no source");
      const own = (await h.api.get("/v1/templates/branded", { key: a.apiKey })).json;
      assert.deepEqual([own.html, own.asset_names], [html, ["brand.ttf", "logo.png", "style.css"]], "its owner reads its source and its files' names");
      assert.equal((await h.api.get("/v1/templates")).json.templates.find((t: { id: string }) => t.id === "invoice").html, undefined, "never the catalog's");
      const response = await h.api.post("/v1/render", { template_id: "branded", data: { who: "Ada" } }, { key: a.apiKey });
      assert.equal(response.status, 200, response.text);
      const pdf = (await h.api.download(response.json.url)).body;
      const text = pdfText(pdf);
      assert.match(text, /Branded Ada/);
      assert.match(text, /image 3x2/);
      assert.match(text, /stylesheet applied/);
      const fonts = pdfFonts(pdf);
      const brand = fonts.find((f) => /DejaVuSans-ExtraLight/.test(f.name));
      assert.ok(brand, `the asset font is in the PDF: ${JSON.stringify(fonts)}`);
      assert.equal(brand.embedded, true);
      const sizes = Object.entries(assets).map(([name, base64]) => ({ name, size_bytes: Buffer.from(base64, "base64").length }));
      const v1 = (await h.api.get("/v1/templates/branded/versions/1", { key: a.apiKey })).json;
      assert.deepEqual([v1.html, v1.assets], [html, sizes], "each version's source and its assets' names and sizes");
      // Version 2 drops the stylesheet and changes the image: each version keeps its own files.
      const png2 = tinyPng(5, 4);
      const html2 = html.replace('<link rel="stylesheet" href="assets/style.css">', "");
      const v2put = await h.api.request("PUT", "/v1/templates/branded", {
        key: a.apiKey,
        json: letter(html2, { assets: { "brand.ttf": assets["brand.ttf"], "logo.png": png2.toString("base64") } }),
      });
      assert.equal(v2put.status, 200, v2put.text);
      const v2 = (await h.api.get("/v1/templates/branded/versions/2", { key: a.apiKey })).json;
      assert.deepEqual([v2.html, v2.assets], [html2, [sizes[0], { name: "logo.png", size_bytes: png2.length }]]);
      for (const [n, name, bytes, type] of [
        [1, "style.css", Buffer.from(assets["style.css"], "base64"), "text/css; charset=utf-8"],
        [1, "logo.png", tinyPng(), "image/png"],
        [2, "logo.png", png2, "image/png"],
        [2, "brand.ttf", FONT, "font/ttf"],
      ] as const) {
        const file = await h.api.get(`/v1/templates/branded/versions/${n}/assets/${name}`, { key: a.apiKey });
        assert.equal(file.status, 200, file.text);
        assert.ok(file.body.equals(bytes), `version ${n}'s ${name}: its bytes`);
        assert.equal(file.headers["content-type"], type);
        assert.equal(file.headers["content-disposition"], `attachment; filename="${name}"; filename*=UTF-8''${name}`);
        assert.equal(file.headers["content-security-policy"], "sandbox; default-src 'none'");
        assert.equal(file.headers["x-content-type-options"], "nosniff");
      }
      expectError(await h.api.get("/v1/templates/branded/versions/2/assets/style.css", { key: a.apiKey }), 404, "NOT_FOUND");
      expectError(await h.api.get("/v1/templates/branded/versions/3/assets/logo.png", { key: a.apiKey }), 404, "TEMPLATE_VERSION_NOT_FOUND");
      expectError(await h.api.get("/v1/templates/branded/versions/1/assets/logo.png", { key: b.apiKey }), 404, "TEMPLATE_NOT_FOUND");
      expectError(await h.api.get("/v1/templates/branded/versions/1/assets/logo.png"), 401, "AUTH_INVALID");
      expectError(await h.api.get("/v1/templates/invoice/versions/1/assets/logo.png", { key: a.apiKey }), 404, "TEMPLATE_NOT_FOUND");
      // The JavaScript client reads them too.
      const client = new Pressroom({ apiKey: a.apiKey, baseUrl: h.stack.baseUrl });
      assert.deepEqual((await client.template("branded", 2)).assets, v2.assets);
      assert.ok(Buffer.from(await client.templateAsset("branded", 1, "style.css")).equals(Buffer.from(assets["style.css"], "base64")));
      await assert.rejects(
        client.templateAsset("branded", 2, "style.css"),
        (err: { code: string; status: number }) => err.code === "NOT_FOUND" && err.status === 404,
      );
    });

    it("a png template renders at its size through /v1/image, and its preview needs the key", async () => {
      const created = await h.api.post(
        "/v1/templates",
        { id: "card", name: "Card", output: "png", width: 300, height: 120, html: "<div>{{title}}</div>", sample_data: { title: "Hi" } },
        { key: a.apiKey },
      );
      assert.equal(created.status, 201, created.text);
      assert.deepEqual([created.json.width, created.json.height, created.json.device_scale_factor], [300, 120, 1]);
      const image = await h.api.post("/v1/image", { template_id: "card", data: { title: "Hello" } }, { key: a.apiKey });
      assert.equal(image.status, 200, image.text);
      assert.deepEqual(pngSize((await h.api.download(image.json.url)).body), { width: 300, height: 120 });
      expectError(await h.api.post("/v1/render", { template_id: "card", data: {} }, { key: a.apiKey }), 422, "PAYLOAD_INVALID");
      const preview = await h.api.get("/v1/templates/card/preview.png", { key: a.apiKey });
      assert.equal(preview.status, 200, preview.text);
      assert.equal(preview.headers["content-type"], "image/png");
      assert.deepEqual(pngSize(preview.body), { width: 300, height: 120 });
      expectError(await h.api.get("/v1/templates/card/preview.png"), 404, "TEMPLATE_NOT_FOUND");

      // A version cannot change what the template makes: refused before its preview is admitted or counted.
      const previewsBefore = (await h.api.get("/v1/keys/usage", { key: a.apiKey })).json.previews.used;
      const changed = await h.api.request("PUT", "/v1/templates/card", { key: a.apiKey, json: letter("<p>now a PDF</p>") });
      assert.match(
        expectError(changed, 422, "PAYLOAD_INVALID").error,
        /^output: template "card" makes PNG images; a new version cannot change its output to pdf/,
      );
      const kept = (await h.api.get("/v1/templates/card", { key: a.apiKey })).json;
      assert.deepEqual([kept.version, kept.output], [1, "png"]);
      assert.equal((await h.api.get("/v1/keys/usage", { key: a.apiKey })).json.previews.used, previewsBefore, "no preview admitted");
    });
    it("an A3 or Tabloid template's preview has its page's size, landscape turned", async () => {
      for (const [format, landscape, size] of [
        ["A3", false, { width: 1123, height: 1587 }],
        ["Tabloid", false, { width: 1056, height: 1632 }],
        ["A3", true, { width: 1587, height: 1123 }],
      ] as const) {
        const id = `paper-${format.toLowerCase()}-${landscape ? "wide" : "tall"}`;
        const created = await h.api.post("/v1/templates", { id, ...letter("<p>{{who}}</p>"), page: { format, landscape } }, { key: a.apiKey });
        assert.equal(created.status, 201, created.text);
        const preview = await h.api.get(`/v1/templates/${id}/preview.png`, { key: a.apiKey });
        assert.equal(preview.status, 200, preview.text);
        assertPageSize(pngSize(preview.body), size, `${format}${landscape ? " landscape" : ""}`);
      }
    });
  });

  describe("validation and the preview on save", () => {
    const bad: [string, Record<string, unknown>, RegExp][] = [
      ["an unknown field", { id: "v1", ...letter("<p>x</p>"), colour: "red" }, /unknown field: colour/],
      ["html that does not compile", { id: "v2", ...letter("<p>\n  {{#if who}} x\n</p>") }, /html: does not compile at line \d+, column \d+/],
      ["a data_schema that is not a JSON Schema", { id: "v3", ...letter("<p>x</p>", { data_schema: { type: "nonsense" } }) }, /data_schema/],
      ["sample_data that fails data_schema", { id: "v4", ...letter("<p>x</p>", { sample_data: { who: 5 } }) }, /sample_data\.who/],
      [
        "a data_schema over 64 KB",
        { id: "v8", ...letter("<p>x</p>", { data_schema: { type: "object", description: "d".repeat(65_536) } }) },
        /data_schema: \d+ bytes is over the limit of 65,536 bytes/,
      ],
      ["a png without its size", { id: "v5", name: "x", output: "png", html: "<p>x</p>" }, /width and height are required for png/],
      ["html over 512 KB", { id: "v6", ...letter("x".repeat(524_289)) }, /html: .*over the limit/],
      ["an asset over 1 MiB", { id: "v7", ...letter("<p>x</p>"), assets: { "big.bin": Buffer.alloc(1_048_577).toString("base64") } }, /big\.bin/],
      ["a bad template id", { id: "Bad_Id", ...letter("<p>x</p>") }, /^id: /],
    ];
    for (const [what, body, message] of bad) {
      it(`422 PAYLOAD_INVALID for ${what}, naming the problem`, async () => {
        const error = expectError(await h.api.post("/v1/templates", body, { key: a.apiKey }), 422, "PAYLOAD_INVALID");
        assert.match(error.error, message);
      });
    }

    it("a data_schema with an $id works for every version and every account that declares it", async () => {
      const schema = { $id: "https://schemas.example.com/person", type: "object", properties: { who: { type: "string" } }, required: ["who"] };
      for (const [key, html] of [
        [a.apiKey, "<p>first {{who}}</p>"],
        [a.apiKey, "<p>second {{who}}</p>"],
        [b.apiKey, "<p>other {{who}}</p>"],
      ] as const) {
        const exists = (await h.api.get("/v1/templates/person", { key })).status === 200;
        const saved = await h.api.request(exists ? "PUT" : "POST", exists ? "/v1/templates/person" : "/v1/templates", {
          key,
          json: { ...(exists ? {} : { id: "person" }), ...letter(html, { data_schema: schema }) },
        });
        assert.equal(saved.status, exists ? 200 : 201, saved.text);
        assert.match((await renderText(key, { template_id: "person", data: { who: "Ada" } })).text, new RegExp(html.slice(3, -4).replace("{{who}}", "Ada")));
        expectError(await h.api.post("/v1/render", { template_id: "person", data: {} }, { key }), 422, "PAYLOAD_INVALID");
      }
    });

    it("a template whose preview fails is refused 422 RENDER_FAILED: no version, no quota unit", async () => {
      const before = (await h.api.get("/v1/keys/usage", { key: a.apiKey })).json.renders.used;
      const failing = await h.api.post(
        "/v1/templates",
        { id: "broken", ...letter("<script>throw new Error('boom in template')</script><p>x</p>") },
        { key: a.apiKey },
      );
      const error = expectError(failing, 422, "RENDER_FAILED");
      assert.match(error.error, /boom in template/);
      expectError(await h.api.get("/v1/templates/broken", { key: a.apiKey }), 404, "TEMPLATE_NOT_FOUND");
      const replace = await h.api.request("PUT", "/v1/templates/welcome", { key: a.apiKey, json: letter("<script>throw new Error('boom')</script>") });
      expectError(replace, 422, "RENDER_FAILED");
      assert.equal((await h.api.get("/v1/templates/welcome", { key: a.apiKey })).json.version, 3);
      assert.equal((await h.api.get("/v1/keys/usage", { key: a.apiKey })).json.renders.used, before);
    });
  });

  describe("delete, limits, audit", () => {
    it("DELETE: 204, then renders get 404; a job admitted before finishes with its version; the id can be made again", async () => {
      const created = await h.api.post("/v1/templates", { id: "short-lived", ...letter("<p>Short {{who}}</p>") }, { key: a.apiKey });
      assert.equal(created.status, 201, created.text);
      const queued = await h.api.post(
        "/v1/render",
        { template_id: "short-lived", data: { who: "Ada" }, webhook_url: "https://hooks.example.com/x" },
        { key: a.apiKey },
      );
      assert.equal(queued.status, 202, queued.text);
      const deleted = await h.api.request("DELETE", "/v1/templates/short-lived", { key: a.apiKey });
      assert.equal(deleted.status, 204, deleted.text);
      expectError(await h.api.post("/v1/render", { template_id: "short-lived", data: { who: "x" } }, { key: a.apiKey }), 404, "TEMPLATE_NOT_FOUND");
      expectError(
        await h.api.post("/v1/render", { template_id: "short-lived", template_version: 1, data: { who: "x" } }, { key: a.apiKey }),
        404,
        "TEMPLATE_NOT_FOUND",
      );
      expectError(await h.api.get("/v1/templates/short-lived", { key: a.apiKey }), 404, "TEMPLATE_NOT_FOUND");
      let job: ApiResponse;
      const deadline = Date.now() + 30_000;
      do {
        await new Promise((resolve) => setTimeout(resolve, 250));
        job = await h.api.get(`/v1/jobs/${queued.json.id}`, { key: a.apiKey });
      } while (job.json.status !== "succeeded" && job.json.status !== "failed" && Date.now() < deadline);
      assert.equal(job.json.status, "succeeded", job.text);
      assert.equal(job.json.template_version, 1);
      assert.match(pdfText((await h.api.download(job.json.url)).body), /Short Ada/);
      const again = await h.api.post("/v1/templates", { id: "short-lived", ...letter("<p>Again {{who}}</p>") }, { key: a.apiKey });
      assert.equal(again.status, 201, again.text);
      assert.equal(again.json.version, 1, "a template made again starts at version 1");
      assert.deepEqual(
        (await h.api.get("/v1/templates/short-lived/versions", { key: a.apiKey })).json.versions.map((v: { version: number }) => v.version),
        [1],
      );
      assert.match((await renderText(a.apiKey, { template_id: "short-lived", data: { who: "Bo" } })).text, /Again Bo/);
    });

    it("a job admitted before a delete renders its version, even once the id is made again and has that version number", async () => {
      const created = await h.api.post("/v1/templates", { id: "reborn", ...letter("<p>Old {{who}}</p>") }, { key: a.apiKey });
      assert.equal(created.status, 201, created.text);
      // The first part keeps the job busy; the template part is looked up only once it is printed, after the template was made again.
      const slow = "<p>Slow part</p><script>const until = Date.now() + 6000; while (Date.now() < until) {}</script>";
      const queued = await h.api.post(
        "/v1/render",
        { data: {}, documents: [{ html: slow }, { template_id: "reborn", data: { who: "Ada" } }], webhook_url: "https://hooks.example.com/x" },
        { key: a.apiKey },
      );
      assert.equal(queued.status, 202, queued.text);
      assert.equal((await h.api.request("DELETE", "/v1/templates/reborn", { key: a.apiKey })).status, 204);
      const again = await h.api.post("/v1/templates", { id: "reborn", ...letter("<p>New {{who}}</p>") }, { key: a.apiKey });
      assert.equal(again.status, 201, again.text);
      assert.equal(again.json.version, 1);
      let job = await h.api.get(`/v1/jobs/${queued.json.id}`, { key: a.apiKey });
      assert.equal(job.json.status === "succeeded", false, "the job was still rendering when the template was made again");
      const deadline = Date.now() + 60_000;
      while (job.json.status !== "succeeded" && job.json.status !== "failed" && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        job = await h.api.get(`/v1/jobs/${queued.json.id}`, { key: a.apiKey });
      }
      assert.equal(job.json.status, "succeeded", job.text);
      const earlier = pdfText((await h.api.download(job.json.url)).body);
      assert.match(earlier, /Slow part[\s\S]*Old Ada/);
      assert.doesNotMatch(earlier, /New Ada/);
      const next = await renderText(a.apiKey, { template_id: "reborn", data: { who: "Ada" } });
      assert.match(next.text, /New Ada/);
      assert.equal((await h.api.get(`/v1/jobs/${next.response.json.id}`, { key: a.apiKey })).json.template_version, 1);
    });

    it("plan limits: free stores 3, demo none; 403 TEMPLATE_LIMIT_REACHED naming the plan and the limit", async () => {
      const free = await h.admin.createKey("free");
      for (const id of ["f1", "f2", "f3"]) assert.equal((await h.api.post("/v1/templates", { id, ...letter("<p>x</p>") }, { key: free.apiKey })).status, 201);
      const over = expectError(await h.api.post("/v1/templates", { id: "f4", ...letter("<p>x</p>") }, { key: free.apiKey }), 403, "TEMPLATE_LIMIT_REACHED");
      assert.match(over.hint, /free/i);
      assert.match(over.hint, /\b3\b/);
      assert.equal((await h.api.request("DELETE", "/v1/templates/f1", { key: free.apiKey })).status, 204);
      assert.equal((await h.api.post("/v1/templates", { id: "f4", ...letter("<p>x</p>") }, { key: free.apiKey })).status, 201);
      // One place left, three creates at once: exactly one is stored. Each preview takes the free key's one slot while it renders,
      // so a create racing it is refused for the slot (429) or, once the winner is stored, for the limit (403).
      assert.equal((await h.api.request("DELETE", "/v1/templates/f2", { key: free.apiKey })).status, 204);
      const racing = await Promise.all(["r1", "r2", "r3"].map((id) => h.api.post("/v1/templates", { id, ...letter("<p>x</p>") }, { key: free.apiKey })));
      const why = racing.map((r) => r.text).join("\n");
      assert.equal(racing.filter((r) => r.status === 201).length, 1, why);
      // Neither refusal stores anything: one 201 is one stored.
      for (const r of racing.filter((r) => r.status !== 201)) assert.ok(["TEMPLATE_LIMIT_REACHED", "CONCURRENCY_EXCEEDED"].includes(r.json?.code), why);
      const demo = expectError(await h.api.post("/v1/templates", { id: "d1", ...letter("<p>x</p>") }, { key: DEMO_API_KEY }), 403, "TEMPLATE_LIMIT_REACHED");
      assert.match(demo.hint, /demo/i);
      assert.match(demo.hint, /\b0\b/);
    });

    it("every change is an account event with the version and the source's digest, never the source", async () => {
      const events = (await accountEvents(a.keyId)).filter((e) => e.type.startsWith("account.template_"));
      const welcome = events.filter((e) => (e.templateCreated ?? e.templateVersioned ?? e.templateDeleted)?.templateId === "welcome");
      assert.deepEqual(
        welcome.map((e) => e.type),
        ["account.template_created", "account.template_versioned", "account.template_versioned"],
      );
      const digest = createHash("sha256").update("<h1>Hello {{who}}, version two</h1>").digest("hex");
      assert.deepEqual(welcome[1]!.templateVersioned, { templateId: "welcome", version: 2, sourceSha256: digest });
      assert.equal(welcome[1]!.actor, "customer");
      const deletedEvent = events.find((e) => e.type === "account.template_deleted");
      assert.equal(deletedEvent?.templateDeleted?.templateId, "short-lived");
      assert.equal(deletedEvent?.templateDeleted?.version, 1);
      for (const e of events) assert.ok(!JSON.stringify(accountEventsV1.AccountEvent.toJSON(e)).includes("Hello {{who}}"));
    });

    it("the gallery shows the public catalog only", async () => {
      // Pages, not API answers: fetched beside the recorded client.
      const gallery = await fetch(`${h.stack.baseUrl}/`);
      assert.equal(gallery.status, 200);
      const text = await gallery.text();
      assert.ok(text.includes("invoice") && !text.includes("secret-a") && !text.includes("branded"));
      assert.equal((await fetch(`${h.stack.baseUrl}/templates/secret-a`)).status, 404);
    });
  });

  endOfSuiteChecks(() => h);
});
