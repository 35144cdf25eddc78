import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "@pressroom/platform";
import { validateTemplate } from "./templates/request";
import { mergeOptions, withTemplateOptions } from "./template-options";

const DAY = 86_400;
const own = (options: Record<string, unknown>) => ({ id: "letter", optionsJson: JSON.stringify(options) });
/** A contract value without its unset (undefined) fields. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
const render = (options?: Record<string, unknown>) => ({ template_id: "letter", data: {}, ...(options ? { options } : {}) });

describe("a template's default options under a request's", () => {
  it("merge field by field: objects per key at every depth, scalars and arrays replaced", () => {
    const merged = mergeOptions(
      { landscape: true, margin: { top: "1cm", bottom: "2cm" }, metadata: { title: "Default", keywords: ["a", "b"] }, wait_for: { selector: "#a" } },
      { landscape: false, margin: { top: "3cm" }, metadata: { keywords: ["c"] }, wait_for: { network_idle: true } },
    );
    assert.deepEqual(merged, {
      landscape: false,
      margin: { top: "3cm", bottom: "2cm" },
      metadata: { title: "Default", keywords: ["c"] },
      wait_for: { selector: "#a", network_idle: true },
    });
  });

  it("give a render the template's defaults, the request's options winning", () => {
    const template = own({ footer_html: "<p>Footer</p>", margin: { top: "1cm", bottom: "2cm" }, metadata: { title: "Default", author: "Ann" } });
    const request = withTemplateOptions("render", render({ margin: { top: "3cm" }, metadata: { title: "Mine" } }), template, "free");
    assert.ok(request && !(request instanceof AppError));
    assert.equal(request.options?.footerHtml, "<p>Footer</p>");
    assert.deepEqual(plain(request.options?.margin), { top: "3cm", bottom: "2cm" });
    assert.deepEqual([request.options?.metadata?.title, request.options?.metadata?.author], ["Mine", "Ann"]);
    const without = withTemplateOptions("render", render(), template, "free");
    assert.ok(without && !(without instanceof AppError));
    assert.deepEqual(
      [without.options?.metadata?.title, without.options?.metadata?.author],
      ["Default", "Ann"],
      "a request without options takes the defaults whole",
    );
  });

  it("leave a request alone when the template has none (the public catalog's)", () => {
    assert.equal(withTemplateOptions("render", render({ landscape: true }), { id: "invoice", optionsJson: "{}" }, "free"), undefined);
    assert.equal(withTemplateOptions("image", render(), { id: "og-image", optionsJson: "" }, "free"), undefined);
  });

  it("take a render's paper size from the request, whichever way either side gives it", () => {
    const sized = withTemplateOptions("render", render({ width: "5in", height: "7in" }), own({ format: "Letter", landscape: true }), "free");
    assert.ok(sized && !(sized instanceof AppError));
    assert.deepEqual([sized.options?.format, sized.options?.width, sized.options?.height], [undefined, "5in", "7in"]);
    assert.equal(sized.options?.landscape, true, "the template's other page settings stay");
    const named = withTemplateOptions("render", render({ format: "A5" }), own({ width: "5in", height: "7in" }), "free");
    assert.ok(named && !(named instanceof AppError));
    assert.deepEqual([named.options?.format, named.options?.width, named.options?.height], ["A5", undefined, undefined]);
    const half = withTemplateOptions("render", render({ width: "5in" }), own({ format: "Letter" }), "free");
    assert.ok(half instanceof AppError, "a request's half paper size is still refused");
    assert.match(half.message, /^options\.height: width and height go together/);
  });

  it("check the merged options again, refusing a combination neither side makes alone", () => {
    const archive = withTemplateOptions("render", render({ pdfua: true }), own({ pdfa: "PDF/A-2b" }), "free");
    assert.ok(archive instanceof AppError);
    assert.equal(archive.code, "PAYLOAD_INVALID");
    assert.match(
      archive.message,
      /^options\.pdfua: PDF\/A and PDF\/UA cannot be combined yet: give pdfa or pdfua, not both \(.*template "letter"'s default options\)$/,
    );
    assert.match(archive.hint, /GET \/v1\/templates\/letter/);
    const image = withTemplateOptions("image", render({ format: "png" }), own({ format: "jpeg", quality: 80 }), "free");
    assert.ok(image instanceof AppError);
    assert.match(image.message, /^options\.quality: quality applies to jpeg and webp only/);
  });

  it("check the merged output lifetime against the caller's plan", () => {
    const template = own({ output_ttl_seconds: 3 * DAY });
    assert.ok(!(withTemplateOptions("render", render(), template, "pro") instanceof AppError));
    const free = withTemplateOptions("render", render(), template, "free");
    assert.ok(free instanceof AppError);
    assert.match(free.message, /^options\.output_ttl_seconds: 259200 is over the Free plan's maximum/i);
  });
});

describe("a template's saved options", () => {
  const pdf = (options: unknown) => ({ id: "letter", name: "Letter", output: "pdf", html: "<p>x</p>", options });
  const png = (options: unknown) => ({ id: "card", name: "Card", output: "png", html: "<p>x</p>", width: 600, height: 300, options });

  it("are checked as a request's options, naming options.<field>", () => {
    const saved = validateTemplate(pdf({ footer_html: "<p>f</p>", margin: { bottom: "2cm" }, metadata: { title: "T" } }), "free");
    assert.ok(!(saved instanceof AppError));
    assert.deepEqual(saved.options, { footer_html: "<p>f</p>", margin: { bottom: "2cm" }, metadata: { title: "T" } });
    const margin = validateTemplate(pdf({ margin: { top: "1em" } }), "free");
    assert.ok(margin instanceof AppError);
    assert.equal(margin.code, "PAYLOAD_INVALID");
    assert.match(margin.message, /^options\.margin\.top: /);
    const unknown = validateTemplate(pdf({ colour: "red" }), "free");
    assert.ok(unknown instanceof AppError);
    assert.equal(unknown.message, "options: unknown option: colour");
    const notObject = validateTemplate(pdf("A4"), "free");
    assert.ok(notObject instanceof AppError);
    assert.equal(notObject.message, "options: must be a JSON object");
    const lifetime = validateTemplate(pdf({ output_ttl_seconds: 7 * DAY }), "free");
    assert.ok(lifetime instanceof AppError);
    assert.match(lifetime.message, /^options\.output_ttl_seconds: /);
  });

  it("of a png template are an image's, without the url's size", () => {
    assert.ok(!(validateTemplate(png({ format: "jpeg", quality: 70, wait_for: { network_idle: true } }), "free") instanceof AppError));
    const size = validateTemplate(png({ width: 800 }), "free");
    assert.ok(size instanceof AppError);
    assert.equal(size.message, "options.width: applies to a url only: a template sets its own size");
    const footer = validateTemplate(png({ footer_html: "<p>f</p>" }), "free");
    assert.ok(footer instanceof AppError);
    assert.match(footer.message, /^options: unknown option: footer_html/);
    const quality = validateTemplate(pdf({ quality: 70 }), "free");
    assert.ok(quality instanceof AppError, "a pdf template's options are a render's");
  });
});
