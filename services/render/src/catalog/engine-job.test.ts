import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RenderOptions } from "@pressroom/domain";
import type { PageJson } from "../db";
import { engineJob, optionsOver, previewJob, templateOptions, type TemplateSettings } from "./engine-job";

const page: PageJson = {
  format: "Letter",
  landscape: false,
  margin_top: "20mm",
  margin_right: "15mm",
  margin_bottom: "20mm",
  margin_left: "15mm",
  header_template: "",
  footer_template: "<span class=pageNumber></span>",
};
const invoice: TemplateSettings = { owner: "", output: "pdf", page, image: null, settings: {} };
const card: TemplateSettings = { owner: "key_1", output: "png", page: null, image: { width: 100, height: 50, device_scale_factor: 2 }, settings: {} };
const job = (options: RenderOptions, kind: "pdf" | "png" = "pdf") => ({ html: "<p>x</p>", kind, options, keyId: "key_1" });

describe("a template as the engine renders it", () => {
  it("keeps the template's page settings, in the options' shape, where the request gives none", () => {
    assert.deepEqual(templateOptions(invoice), {
      format: "Letter",
      landscape: false,
      margin: { top: "20mm", right: "15mm", bottom: "20mm", left: "15mm" },
      headerHtml: "",
      footerHtml: "<span class=pageNumber></span>",
    });
    const rendered = engineJob(invoice, job({ scale: 2, format: undefined }));
    assert.deepEqual(rendered.options, { ...templateOptions(invoice), scale: 2 });
    assert.equal(rendered.kind, "pdf");
    assert.equal(rendered.scriptErrors, "fail");
    assert.equal(rendered.keyId, "key_1");
  });

  it("lets the request's page options win, one by one, a margin side by side", () => {
    const options = engineJob(invoice, job({ format: "A5", landscape: true, margin: { top: "1in" }, footerHtml: "<p>f</p>" })).options!;
    assert.equal(options.format, "A5");
    assert.equal(options.landscape, true);
    assert.deepEqual(options.margin, { top: "1in", right: "15mm", bottom: "20mm", left: "15mm" });
    assert.equal(options.footerHtml, "<p>f</p>");
    const sized = engineJob(invoice, job({ width: "100mm", height: "200mm" })).options!;
    assert.deepEqual([sized.format, sized.width, sized.height], [undefined, "100mm", "200mm"]);
    assert.equal(optionsOver(sized, { format: "A3" }).width, undefined, "a format replaces a width and height");
  });

  it("gives raw HTML and a url the request's options alone: the engine prints them on A4 with 1 cm margins, their CSS page size preferred", () => {
    assert.deepEqual(engineJob(undefined, job({ scale: 1, margin: undefined })).options, { scale: 1 });
    const image = engineJob(undefined, job({ imageWidth: 640, omitBackground: true }, "png"));
    assert.deepEqual(image.options, { imageWidth: 640, imageHeight: 800, deviceScaleFactor: 1, omitBackground: true });
    assert.equal(image.scriptErrors, undefined);
  });

  it("lets the request's fail_on_script_error decide over the template's setting", () => {
    const tolerant = { ...invoice, settings: { script_errors: "ignore" as const } };
    assert.equal(engineJob(tolerant, job({})).scriptErrors, "ignore");
    assert.equal(engineJob(tolerant, job({ failOnScriptError: true })).scriptErrors, "fail");
    assert.equal(engineJob(invoice, job({ failOnScriptError: false })).scriptErrors, "ignore");
    assert.equal(engineJob(undefined, job({ failOnScriptError: false })).scriptErrors, "ignore");
  });

  it("makes an image of the template's own size, in the asked format", () => {
    const rendered = engineJob(card, job({ imageFormat: "webp", quality: 70, imageWidth: 999 }, "pdf"));
    assert.equal(rendered.kind, "png", "the template's output decides");
    assert.deepEqual(rendered.options, { imageWidth: 100, imageHeight: 50, deviceScaleFactor: 2, imageFormat: "webp", quality: 70 });
  });

  it("previews an image template at its image's size, in its owner's windows", () => {
    const assets = new Map<string, Uint8Array>();
    assert.deepEqual(previewJob(card, "<p>card</p>", assets, {}), {
      html: "<p>card</p>",
      kind: "png",
      options: { imageWidth: 100, imageHeight: 50 },
      assets,
      scriptErrors: "fail",
      keyId: "key_1",
    });
  });

  it("previews a pdf template as a job of it prints it: its page settings under its version's default options, in the shared windows for the catalog's", () => {
    const assets = new Map<string, Uint8Array>();
    const defaults: RenderOptions = { margin: { top: "1in" }, headerHtml: "<p>For Ada</p>", scale: 0.9 };
    const printed = previewJob({ ...invoice, settings: { script_errors: "ignore" } }, "<p>x</p>", assets, defaults);
    assert.equal(printed.kind, "pdf");
    assert.deepEqual(printed.options, {
      ...templateOptions(invoice),
      margin: { top: "1in", right: "15mm", bottom: "20mm", left: "15mm" },
      headerHtml: "<p>For Ada</p>",
      scale: 0.9,
    });
    assert.equal(printed.assets, assets);
    assert.equal(printed.scriptErrors, "ignore");
    assert.equal(printed.keyId, undefined, "the public catalog's previews run in the shared windows");
    assert.equal(previewJob({ ...invoice, owner: "key_1" }, "", assets, {}).keyId, "key_1");
  });
});
