import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { expectRenderFailed, rendersCharged } from "./test-support/hostile";
import { pdfText } from "./test-support/pdf";

/** The suite's output cap: small, so that each bomb reaches it within a page or a few parts. */
const LIMITS = { RENDER_DEADLINE_MS: "20000", RENDER_MAX_PAGES: "50", RENDER_MAX_OUTPUT_BYTES: String(1024 * 1024) };

/** A 64-pixel tile of random pixels, drawn by the document as the background of each of its `blocks`. */
const noisy = (blocks: string, style: string) => `<html lang="en"><title>bomb</title><style>${style}</style>${blocks}<script>
  const c = document.createElement("canvas"); c.width = c.height = 64; const g = c.getContext("2d"); const img = g.createImageData(64, 64);
  for (let i = 0; i < img.data.length; i++) img.data[i] = i % 4 === 3 ? 255 : Math.random() * 256;
  g.putImageData(img, 0, 0);
  for (const d of document.querySelectorAll("div")) d.style.backgroundImage = "url(" + c.toDataURL() + ")";
</script></html>`;

/** A page with a 400 × 400 canvas of random pixels: about 480 KB printed, which nothing compresses. */
const NOISE_CANVAS = `<canvas id="c" width="400" height="400"></canvas><script>
  const g = c.getContext("2d"); const img = g.createImageData(400, 400);
  for (let i = 0; i < img.data.length; i++) img.data[i] = i % 4 === 3 ? 255 : Math.random() * 256;
  g.putImageData(img, 0, 0);
</script>`;

/**
 * Post-processing bombs (issue 39, item 4) sent through POST /v1/render: documents Chromium prints
 * within every limit, whose post-processing would not be. Each fails 422 RENDER_FAILED naming
 * the limit it hit, its owner is charged, and another key's document is served meanwhile.
 */
describe("hostile post-processing: every tool and step bounded", () => {
  let h: Harness;

  before(async () => {
    h = await startHarness({ env: { RENDER_SLOTS: "2", ...LIMITS } });
  });
  after(async () => {
    await h?.stop();
  });

  /** `units`: what the job is charged, a render per document (a merged job's parts). */
  const cases: { name: string; body: () => Record<string, unknown>; fails: RegExp; units: number }[] = [
    {
      // 45 translucent pages of noise, a few KiB printed: PDF/A-1 flattens each into an image, about 7 MB at pdfwrite's 720 dpi.
      name: "a PDF/A flattening that would write gigabytes",
      body: () => ({
        html: noisy("<div></div>".repeat(45), "div { height: 1000px; opacity: 0.6; break-after: page }"),
        data: {},
        options: { pdfa: "PDF/A-1b" },
      }),
      fails: /Ghostscript wrote more than 1 MiB \(the output size cap\)/,
      units: 1,
    },
    {
      // 20 parts (the most a job may have), each within the output cap, far past it together.
      name: "a 20-part merge of parts near the output cap",
      body: () => ({
        data: {},
        documents: Array.from({ length: 20 }, () => ({ html: NOISE_CANVAS })),
      }),
      fails: /documents\[\d+\]: the documents add up to more than 1 MiB \(the output size cap\)/,
      units: 20,
    },
  ];

  for (const [n, doc] of cases.entries()) {
    it(`${doc.name}: fails naming its limit, charged, while another key is served`, async () => {
      const { apiKey: owner } = await h.admin.createKey("business");
      const { apiKey: other } = await h.admin.createKey("business");
      const hostile = h.api.post("/v1/render", doc.body(), { key: owner });
      const ordinary = await h.api.post("/v1/render", { html: "<p>Invoice {{n}}</p>", data: { n: n + 1 } }, { key: other });
      assert.equal(ordinary.status, 200, `another key meanwhile: ${ordinary.text}`);
      assert.match(pdfText((await h.api.download(ordinary.json.url)).body), new RegExp(`Invoice ${n + 1}`));
      expectRenderFailed(await hostile, doc.fails, doc.name);
      assert.equal(await rendersCharged(h.api, owner), doc.units, `${doc.name}: its owner is charged, not refunded`);
    });
  }

  endOfSuiteChecks(() => h);
});
