import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { inspect } from "node:util";
import { after, before, describe, it } from "node:test";
import type { RenderEngine } from "../engine";
import { RenderFailure } from "../engine";
import { pdfFonts, pdfInfo, pdfOutline, startEngine } from "../test-support/engine";
import { merge, postProcess, postProcessingOf, sweepAbandonedScratch } from "./index";
import type { RenderOptions } from "@pressroom/domain";

/** Runs a Debian tool on the PDF in a temporary file; its stdout (and stderr with `withErr`). */
function tool(cmd: string, args: (file: string) => string[], data: Uint8Array): { out: string; status: number | null } {
  const dir = mkdtempSync(path.join(tmpdir(), "postprocess-test-"));
  try {
    const file = path.join(dir, "doc.pdf");
    writeFileSync(file, data);
    const run = spawnSync(cmd, args(file), { encoding: "utf8" });
    return { out: run.stdout + run.stderr, status: run.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const meta = (pdf: Uint8Array) => tool("pdfinfo", (f) => ["-meta", f], pdf).out;
const info = (pdf: Uint8Array) => tool("pdfinfo", (f) => [f], pdf).out;
const catalog = (pdf: Uint8Array) => tool("qpdf", (f) => ["--show-object=trailer", "--filtered-stream-data", f], pdf).out;
const rootOf = (pdf: Uint8Array) => {
  const trailer = catalog(pdf);
  const root = /\/Root (\d+) 0 R/.exec(trailer)?.[1];
  return tool("qpdf", (f) => [`--show-object=${root}`, f], pdf).out;
};
const qpdfCheck = (pdf: Uint8Array, password?: string) =>
  tool("qpdf", (f) => [...(password !== undefined ? [`--password=${password}`] : []), "--check", f], pdf);

const options = (o: RenderOptions): RenderOptions => o;
/** 30 s and 50 MiB: what no case here comes near. */
const later = () => ({ deadlineAt: performance.now() + 30_000, maxOutputBytes: 50 * 1024 * 1024 });

const HTML = `<!doctype html><html lang="en"><head><title>Invoice 42</title></head><body>
  <h1>Invoice 42</h1><p>Total due: 120.00 EUR. Ünïcödé text.</p><p style="break-before: page">Terms</p></body></html>`;

describe("post-processing: every option, on a PDF Chromium printed", () => {
  let engine: RenderEngine;
  let printed: Uint8Array;
  before(async () => {
    engine = await startEngine({ slots: 1 });
    printed = (await engine.render({ kind: "pdf", html: HTML })).data;
  });
  after(() => engine.close());

  it("metadata: the information dictionary and the XMP packet say the same", async () => {
    const metadata = { title: "Q3 <report> & co", author: "Ada Lovelace", subject: "Quarterly numbers", keywords: ["finance", "q3"], creator: "Billing app" };
    const out = await postProcess(printed, postProcessingOf(options({ metadata })), later());
    const dict = info(out);
    assert.match(dict, /Title:\s+Q3 <report> & co/);
    assert.match(dict, /Author:\s+Ada Lovelace/);
    assert.match(dict, /Subject:\s+Quarterly numbers/);
    assert.match(dict, /Keywords:\s+finance, q3/);
    assert.match(dict, /Creator:\s+Billing app/);
    assert.match(dict, /Tagged:\s+yes/, "Chromium's tags survive");
    const xmp = meta(out);
    assert.match(xmp, /<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Q3 &#60;report&#62; &#38; co<\/rdf:li>/);
    assert.match(xmp, /<dc:creator><rdf:Seq><rdf:li>Ada Lovelace<\/rdf:li>/);
    assert.match(xmp, /<pdf:Keywords>finance, q3<\/pdf:Keywords>/);
    assert.match(xmp, /<xmp:CreatorTool>Billing app<\/xmp:CreatorTool>/);
    assert.doesNotMatch(xmp, /pdfaid|pdfuaid/);
    assert.equal(pdfInfo(out).pages, 2);
  });

  it("watermark: selectable text on every page, at its opacity and angle", async () => {
    const out = await postProcess(printed, postProcessingOf(options({ watermark: { text: "CONFIDENTIAL", opacity: 0.3, angle: 30, fontSize: 48 } })), later());
    // -raw keeps the rotated line's characters in their drawing order.
    const pages = tool("pdftotext", (f) => ["-raw", f, "-"], out)
      .out.split("\f")
      .filter((p) => p.trim());
    assert.equal(pages.length, 2);
    for (const page of pages) assert.match(page, /CONFIDENTIAL/);
    assert.ok(
      pdfFonts(out).some((f) => f.name.startsWith("LiberationSans") && f.embedded && f.unicode),
      JSON.stringify(pdfFonts(out)),
    );
    const raw = tool("qpdf", (f) => ["--qdf", "--object-streams=disable", f, "-"], out).out;
    assert.match(raw, /\/ca 0\.3/, "the opacity is the fill alpha of its graphics state");
    assert.match(raw, /0\.866\d* 0\.(5|4999\d*) -0\.(5|4999\d*) 0\.866\d* [\d.]+ [\d.]+ Tm/, "rotated by 30 degrees");
    assert.match(raw, /\/Artifact BMC/, "marked as an artifact, outside the tag structure");
  });

  it("encrypt: AES-256, the permissions asked, opened only with a password", async () => {
    const encrypt = { userPassword: "open-sesame", ownerPassword: "owner-secret", permissions: { print: true, copy: false, modify: false, annotate: true } };
    const out = await postProcess(printed, postProcessingOf(options({ encrypt })), later());
    assert.ok(!Buffer.from(out).includes("open-sesame") && !Buffer.from(out).includes("owner-secret"));
    assert.notEqual(qpdfCheck(out).status, 0, "refused without a password");
    const shown = tool("qpdf", (f) => ["--password=open-sesame", "--show-encryption", f], out).out;
    assert.match(shown, /R = 6/);
    assert.match(shown, /stream encryption method: AESv3/);
    assert.match(shown, /print high resolution: allowed/);
    assert.match(shown, /extract for any purpose: not allowed/);
    assert.match(shown, /modify other: not allowed/);
    assert.match(shown, /modify annotations: allowed/);
    assert.match(tool("qpdf", (f) => ["--password=owner-secret", "--show-encryption", f], out).out, /R = 6/);
    assert.match(tool("pdftotext", (f) => ["-upw", "open-sesame", f, "-"], out).out, /Invoice 42/);
  });

  it("encrypt without a user password opens for anyone, with the restrictions", async () => {
    const encrypt = { ownerPassword: "owner-secret", permissions: { print: false, copy: true, modify: false, annotate: false } };
    const out = await postProcess(printed, postProcessingOf(options({ encrypt })), later());
    const shown = tool("qpdf", (f) => ["--show-encryption", f], out).out;
    assert.match(shown, /R = 6/);
    assert.match(shown, /print low resolution: not allowed/);
    assert.match(shown, /extract for any purpose: allowed/);
  });

  it("the password never reaches a command line: qpdf reads it from a private argument file", async () => {
    // qpdf is the real one, behind a script that records the arguments it was started with.
    const bin = mkdtempSync(path.join(tmpdir(), "postprocess-bin-"));
    const log = path.join(bin, "argv.log");
    writeFileSync(path.join(bin, "qpdf"), `#!/bin/sh\nprintf '%s\\n' "$@" >> ${log}\nexec /usr/bin/qpdf "$@"\n`, { mode: 0o755 });
    const pathBefore = process.env.PATH;
    process.env.PATH = `${bin}:${pathBefore}`;
    try {
      const out = await postProcess(
        printed,
        postProcessingOf(options({ encrypt: { ownerPassword: "hunter2-owner", userPassword: "hunter2-user", permissions: undefined } })),
        later(),
      );
      const argv = readFileSync(log, "utf8");
      assert.match(tool("qpdf", (f) => ["--password=hunter2-user", "--show-encryption", f], out).out, /R = 6/);
      assert.match(argv, /^@\/.+\/args$/m, "one argument: the argument file");
      assert.doesNotMatch(argv, /hunter2/);
    } finally {
      process.env.PATH = pathBefore;
      rmSync(bin, { recursive: true, force: true });
    }
  });
  it("a password qpdf would take for an option is refused as the document's fault, without quoting it", async () => {
    for (const [userPassword, ownerPassword] of [
      ["", "-hunter2-owner"],
      ["-hunter2-user", "owner"],
      ["", "--"],
      ["hunter2\nuser", "owner"],
    ] as const) {
      const steps = postProcessingOf(options({ encrypt: { userPassword, ownerPassword, permissions: undefined } }));
      const err: unknown = await postProcess(printed, steps, later()).then(
        () => assert.fail("encrypted"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof RenderFailure);
      assert.equal(err.reason, "invalid_document");
      assert.doesNotMatch(`${inspect(err)} ${JSON.stringify(err)}`, /hunter2/);
    }
  });

  it("a failing encrypt's error keeps neither qpdf's output nor its arguments (either may quote a password)", async () => {
    // A qpdf that fails quoting its argument file on stderr, as the real one quotes an argument it refuses.
    const bin = mkdtempSync(path.join(tmpdir(), "postprocess-bin-"));
    writeFileSync(path.join(bin, "qpdf"), `#!/bin/sh\nfile="\${1#@}"\necho "qpdf: bad arguments:" >&2\ncat "$file" >&2\nexit 2\n`, { mode: 0o755 });
    const pathBefore = process.env.PATH;
    process.env.PATH = `${bin}:${pathBefore}`;
    try {
      const steps = postProcessingOf(options({ encrypt: { ownerPassword: "hunter2-owner", userPassword: "hunter2-user", permissions: undefined } }));
      const err: unknown = await postProcess(printed, steps, later()).then(
        () => assert.fail("encrypted"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof Error);
      assert.match(err.message, /qpdf could not encrypt the document \(exit code 2/);
      assert.doesNotMatch(`${inspect(err)} ${JSON.stringify(err)}`, /hunter2|args/);
    } finally {
      process.env.PATH = pathBefore;
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

/**
 * The corpus PDF/A and PDF/UA output is checked on: documents generated here that exercise
 * what Chromium prints (text in several faces, CJK and emoji drawn as Type 3 glyphs, a
 * raster image, a link annotation, a table, a page break). veraPDF cannot run here, so each
 * output is held to what these tools can see: qpdf --check (structure, cross-reference,
 * streams), pdffonts (every font embedded), pdfinfo (version, encryption, tags), the
 * catalog (output intent with an RGB profile, /MarkInfo, /Lang, DisplayDocTitle) and the
 * XMP packet (pdfaid/pdfuaid identification, the same title as the information dictionary).
 */
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";
const CORPUS: Record<string, string> = {
  letter: HTML,
  scripts: `<!doctype html><html lang="ja"><head><title>多言語</title></head><body><p style="font-family: Arial">Invoice total</p>
    <p style="font-family: 'Times New Roman'">Terms</p><p style="font-family: 'Courier New'">REF-0042</p><p>請求書の合計 中文发票 한국어</p><p>Paid 🎉 ✅</p></body></html>`,
  "image-link-table": `<!doctype html><html lang="en"><head><title>Report</title></head><body><img alt="chart" width="80" height="80" src="data:image/png;base64,${PIXEL}">
    <p><a href="https://example.com/terms">Terms</a></p><table><tr><th>Item</th><th>Price</th></tr><tr><td>Paper</td><td>4.00</td></tr></table></body></html>`,
};

describe("post-processing: the PDF/A and PDF/UA corpus", () => {
  let engine: RenderEngine;
  const printed: Record<string, Uint8Array> = {};
  before(async () => {
    engine = await startEngine({ slots: 1 });
    for (const [name, html] of Object.entries(CORPUS)) printed[name] = (await engine.render({ kind: "pdf", html })).data;
  });
  after(() => engine.close());

  for (const level of ["PDF/A-1b", "PDF/A-2b", "PDF/A-3b"] as const) {
    const part = level[6];
    for (const name of Object.keys(CORPUS)) {
      it(`${level}: ${name}`, async () => {
        const out = await postProcess(
          printed[name]!,
          postProcessingOf(options({ pdfa: level, metadata: { title: `${name} archived`, keywords: [] } })),
          later(),
        );
        const check = qpdfCheck(out);
        assert.equal(check.status, 0, check.out);
        assert.match(check.out, /No syntax or stream encoding errors found/);
        const fonts = pdfFonts(out);
        for (const font of fonts) assert.ok(font.embedded, `embedded: ${JSON.stringify(font)}`);
        if (part === "1" && name === "scripts") {
          // Colour emoji are transparent images, which PDF/A-1 forbids: Ghostscript flattens the page into one image.
          assert.equal(fonts.length, 0);
          assert.match(tool("pdfimages", (f) => ["-list", f], out).out, /image\s+\d+\s+\d+\s+rgb/);
        } else {
          assert.ok(fonts.length > 0, "the text stays text");
          assert.match(tool("pdftotext", (f) => [f, "-"], out).out, /Invoice|Terms|Paper/);
        }
        const dict = info(out);
        assert.match(dict, /Encrypted:\s+no/);
        assert.match(dict, new RegExp(`Title:\\s+${name} archived`));
        assert.match(dict, part === "1" ? /PDF version:\s+1\.4/ : /PDF version:\s+1\.7/);
        const xmp = meta(out);
        assert.match(xmp, new RegExp(`<pdfaid:part>${part}</pdfaid:part><pdfaid:conformance>B</pdfaid:conformance>`));
        assert.match(xmp, new RegExp(`<rdf:li xml:lang="x-default">${name} archived</rdf:li>`));
        const root = rootOf(out);
        const intent = /\/OutputIntents \[ (\d+) 0 R \]/.exec(root)?.[1];
        assert.ok(intent, root);
        const intentDict = tool("qpdf", (f) => [`--show-object=${intent}`, f], out).out;
        assert.match(intentDict, /\/S \/GTS_PDFA1/);
        const profile = /\/DestOutputProfile (\d+) 0 R/.exec(intentDict)?.[1];
        assert.match(tool("qpdf", (f) => [`--show-object=${profile}`, f], out).out, /\/N 3/);
        assert.match(catalog(out), /\/ID \[/, "the trailer has a file identifier");
        if (part === "1") assert.doesNotMatch(Buffer.from(out).toString("latin1"), /\/ObjStm|\/XRefStm/, "no object or cross-reference streams in PDF/A-1");
        assert.equal(pdfInfo(out).pages, pdfInfo(printed[name]!).pages);
      });
    }
  }

  for (const name of Object.keys(CORPUS)) {
    it(`PDF/UA: ${name}`, async () => {
      const out = await postProcess(printed[name]!, postProcessingOf(options({ pdfua: true })), later());
      assert.equal(qpdfCheck(out).status, 0);
      assert.match(info(out), /Tagged:\s+yes/);
      const root = rootOf(out);
      assert.match(root, /\/MarkInfo << \/Marked true/);
      assert.match(root, /\/Lang \((en|ja)\)/);
      assert.match(root, /\/StructTreeRoot \d+ 0 R/);
      assert.match(root, /\/DisplayDocTitle true/);
      const xmp = meta(out);
      assert.match(xmp, /<pdfuaid:part>1<\/pdfuaid:part>/);
      assert.match(xmp, /<dc:title><rdf:Alt><rdf:li xml:lang="x-default">.+<\/rdf:li>/);
      for (const font of pdfFonts(out)) assert.ok(font.embedded && font.unicode, JSON.stringify(font));
    });
  }

  it("PDF/UA refuses a document without a title; metadata.title gives it one", async () => {
    const untitled = (await engine.render({ kind: "pdf", html: "<p>No title</p>" })).data;
    await assert.rejects(postProcess(untitled, postProcessingOf(options({ pdfua: true })), later()), (err: unknown) => {
      assert.ok(err instanceof RenderFailure && err.reason === "invalid_document");
      assert.match(err.message, /needs a title/);
      return true;
    });
    const titled = await postProcess(untitled, postProcessingOf(options({ pdfua: true, metadata: { title: "Given", keywords: [] } })), later());
    assert.match(rootOf(titled), /\/Lang \(en-US\)/, "Chromium names a language when the document does not");
    assert.match(meta(titled), /<rdf:li xml:lang="x-default">Given<\/rdf:li>/);
  });

  it("PDF/A-1b keeps a title outside Latin-1 (in the XMP as in the information dictionary)", async () => {
    const out = await postProcess(printed.scripts!, postProcessingOf(options({ pdfa: "PDF/A-1b" })), later());
    assert.match(info(out), /Title:\s+多言語/);
    assert.match(meta(out), /<rdf:li xml:lang="x-default">多言語<\/rdf:li>/);
  });

  it("keeps the outline (bookmarks) through every step: PDF/A (1b and 2b), a watermark, what the PDF says, encryption", async () => {
    const html = `<html lang="en"><title>Outlined</title><h1>Part one</h1><h2>Detail</h2><h1 style="break-before:page">Part two</h1></html>`;
    const outlined = (await engine.render({ kind: "pdf", html, options: { outline: true } })).data;
    const titles = (pdf: Uint8Array, password?: string) => pdfOutline(pdf, password).map((entry) => [entry.title, entry.kids.map((kid) => kid.title)]);
    const expected = [
      ["Part one", ["Detail"]],
      ["Part two", []],
    ];
    assert.deepEqual(titles(outlined), expected);
    for (const level of ["PDF/A-1b", "PDF/A-2b"] as const) {
      assert.deepEqual(titles(await postProcess(outlined, postProcessingOf(options({ pdfa: level })), later())), expected, level);
    }
    const stamped = options({ watermark: { text: "DRAFT" }, metadata: { title: "Outlined" }, pdfua: true });
    assert.deepEqual(titles(await postProcess(outlined, postProcessingOf(stamped), later())), expected, "watermark, metadata, PDF/UA");
    const encrypt = { ownerPassword: "owner-pw", permissions: { print: true, copy: true, modify: false, annotate: false } };
    assert.deepEqual(titles(await postProcess(outlined, postProcessingOf(options({ encrypt })), later()), "owner-pw"), expected, "encrypted");
  });

  it("merge: every part's pages in order, with their text and fonts", async () => {
    const merged = await merge(async (add) => {
      for (const part of [printed.letter!, printed.scripts!, printed["image-link-table"]!]) await add(part);
    }, later());
    assert.equal(pdfInfo(merged).pages, 4);
    const pages = tool("pdftotext", (f) => [f, "-"], merged).out.split("\f");
    assert.match(pages[0]!, /Invoice 42/);
    assert.match(pages[1]!, /Terms/);
    assert.match(pages[2]!, /請求書の合計/);
    assert.match(pages[3]!, /Paper/);
    for (const font of pdfFonts(merged)) assert.ok(font.embedded);
  });
});

describe("post-processing: every tool and step bounded (issue 39)", () => {
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 1, maxPages: 100 });
  });
  after(() => engine.close());

  /** Pages whose text is transparent: PDF/A-1 forbids transparency, so Ghostscript flattens each page into an image. */
  const translucent = (pages: number) =>
    `<html lang="en"><title>Flattened</title><style>p { opacity: 0.5; font-size: 40px; break-after: page }</style>${Array.from(
      { length: pages },
      (_, i) => `<p>Page ${i} ${"translucent words ".repeat(40)}</p>`,
    ).join("")}</html>`;

  it("flattens a PDF/A-1 page at an explicit resolution (150 dpi), not pdfwrite's 720", async () => {
    const printed = (await engine.render({ kind: "pdf", html: translucent(1) })).data;
    const out = await postProcess(printed, postProcessingOf(options({ pdfa: "PDF/A-1b" })), later());
    const images = tool("pdfimages", (f) => ["-list", f], out).out;
    const widths = [...images.matchAll(/^\s*1\s+\d+\s+image\s+(\d+)\s+(\d+)/gm)].map((m) => Number(m[1]));
    assert.ok(widths.length > 0, images);
    // An A4 page is 8.27 in wide: 1240 pixels at 150 dpi, 5953 at 720.
    assert.ok(Math.max(...widths) <= 1300, `flattened at ${Math.max(...widths)} pixels wide:\n${images}`);
  });

  it("stops Ghostscript while it writes past the output cap: 422 naming the cap and the tool, nothing read past it", async () => {
    const printed = (await engine.render({ kind: "pdf", html: translucent(60) })).data;
    const limits = { deadlineAt: performance.now() + 60_000, maxOutputBytes: 1024 * 1024 };
    assert.ok(printed.byteLength < limits.maxOutputBytes, "what Chromium printed is within the cap");
    await assert.rejects(postProcess(printed, postProcessingOf(options({ pdfa: "PDF/A-1b" })), limits), (err: unknown) => {
      assert.ok(err instanceof RenderFailure && err.reason === "output_cap", inspect(err));
      assert.match(err.message, /Ghostscript wrote more than 1 MiB \(the output size cap\)/);
      return true;
    });
  });

  it("merges parts written to disk as they come, their total held to the output cap: past it the parts left are never asked for", async () => {
    const part = (await engine.render({ kind: "pdf", html: "<p>part</p>" })).data;
    const cap = part.byteLength * 3 + 10;
    let added = 0;
    await assert.rejects(
      merge(
        async (add) => {
          for (let i = 0; i < 20; i++) {
            await add(part);
            added++;
          }
        },
        { deadlineAt: performance.now() + 30_000, maxOutputBytes: cap },
      ),
      (err: unknown) => {
        assert.ok(err instanceof RenderFailure && err.reason === "output_cap", inspect(err));
        assert.match(err.message, /the documents add up to more than \d+ bytes \(the output size cap\)/);
        return true;
      },
    );
    assert.equal(added, 3, "the fourth part passed the cap; no fifth was made");
  });

  it("stops a pdf-lib step at the deadline: it runs on a thread of its own, not the event loop", async () => {
    const printed = (await engine.render({ kind: "pdf", html: translucent(30) })).data;
    const limits = { deadlineAt: performance.now() + 5, maxOutputBytes: 50 * 1024 * 1024 };
    await assert.rejects(postProcess(printed, postProcessingOf(options({ watermark: { text: "LATE" } })), limits), (err: unknown) => {
      assert.ok(err instanceof RenderFailure && err.reason === "deadline", inspect(err));
      assert.match(err.message, /post-processing did not finish within the render deadline \(pdf-lib, watermark\)/);
      return true;
    });
  });

  it("sweeps the scratch directories of processes that are gone, never a living one's", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "postprocess-sweep-"));
    try {
      const gone = spawnSync("true").pid;
      for (const name of [`pressroom-pdf-${gone}-abc`, `pressroom-pdf-${process.pid}-def`, "unrelated"]) mkdirSync(path.join(dir, name));
      assert.deepEqual(await sweepAbandonedScratch(dir), [`pressroom-pdf-${gone}-abc`]);
      assert.deepEqual(readdirSync(dir).sort(), [`pressroom-pdf-${process.pid}-def`, "unrelated"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
