import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "@pressroom/platform";
import { MAX_HTML_BYTES } from "../limits";
import { outputTtlBeyondPlan } from "./option-parts";
import { validateJobRequest } from "./request";

function problem(result: ReturnType<typeof validateJobRequest>): string {
  assert.ok(result instanceof AppError, "expected a validation error");
  assert.equal(result.code, "PAYLOAD_INVALID");
  return result.message;
}

describe("validateJobRequest", () => {
  it("accepts a template render and a raw html render", () => {
    assert.ok(!(validateJobRequest("render", { template_id: "invoice", data: {} }) instanceof AppError));
    assert.ok(!(validateJobRequest("render", { html: "<p>x</p>", data: { a: 1 } }) instanceof AppError));
  });

  it("takes a destination on renders, merged documents and images, keeping its url and headers for the command and its host", () => {
    const url = "https://bucket.s3.eu-west-1.amazonaws.com/out/inv.pdf?X-Amz-Signature=abc123&X-Amz-Credential=AKIA";
    const render = validateJobRequest("render", { html: "<p>x</p>", data: {}, destination: { url, headers: { "x-amz-meta-run": "7" } } });
    assert.ok(!(render instanceof AppError));
    assert.deepEqual(render.destination, { url, headers: { "x-amz-meta-run": "7" }, host: "bucket.s3.eu-west-1.amazonaws.com" });
    const merged = validateJobRequest("render", { documents: [{ html: "<p>a</p>" }], destination: { url } });
    assert.ok(!(merged instanceof AppError));
    assert.deepEqual(merged.destination?.headers, {});
    const image = validateJobRequest("image", { template_id: "og-image", data: {}, destination: { url } });
    assert.ok(!(image instanceof AppError) && image.destination?.host === "bucket.s3.eu-west-1.amazonaws.com");
  });

  it("refuses a bad destination, naming the field and never repeating its url or header values", () => {
    const secret = "sig=s3cr3tvalue";
    const cases: [unknown, RegExp][] = [
      [{ url: `http://h.example/x?${secret}` }, /^destination\.url: must use https/],
      [{ url: `https://h.example:8443/x?${secret}` }, /^destination\.url: must use the default port/],
      [{}, /^destination\.url/],
      [{ url: `https://h.example/x?${secret}`, extra: 1 }, /^destination: unknown option: extra/],
      [{ url: `https://h.example/x?${secret}`, headers: { Host: secret } }, /^destination\.headers\.Host: set by Pressroom/],
      [{ url: `https://h.example/x?${secret}`, headers: { a: `${secret}\r\nX: 1` } }, /^destination\.headers\.a: must not contain line breaks/],
      [`https://h.example/x?${secret}`, /^destination: /],
    ];
    for (const [destination, expected] of cases) {
      const message = problem(validateJobRequest("render", { html: "<p>x</p>", data: {}, destination }));
      assert.match(message, expected);
      assert.ok(!message.includes(secret), message);
    }
  });

  it("takes test (true or false) on a render of any source and on an image; a test image is a png", () => {
    for (const body of [{ html: "x", data: {} }, { url: "https://example.com/" }, { documents: [{ html: "x" }, { template_id: "invoice" }] }]) {
      const parsed = validateJobRequest("render", { ...body, test: true });
      assert.ok(!(parsed instanceof AppError) && parsed.test === true, JSON.stringify(body));
    }
    const image = validateJobRequest("image", { template_id: "og-image", data: {}, test: true, options: { format: "png" } });
    assert.ok(!(image instanceof AppError) && image.test === true);
    const plain = validateJobRequest("render", { html: "x", data: {} });
    assert.ok(!(plain instanceof AppError) && plain.test === undefined);
    assert.match(problem(validateJobRequest("render", { html: "x", data: {}, test: "yes" })), /^test: must be true or false/);
    assert.match(
      problem(validateJobRequest("image", { url: "https://example.com/", test: true, options: { format: "jpeg" } })),
      /^options\.format: a test-mode image is a png/,
    );
  });

  it("names unknown fields", () => {
    assert.match(problem(validateJobRequest("render", { html: "x", data: {}, colour: 1, size: 2 })), /unknown fields: colour, size/);
    assert.match(problem(validateJobRequest("image", { template_id: "og-image", html: "x", data: {} })), /unknown field: html/);
  });

  it("requires exactly one of template_id, html and url", () => {
    assert.match(problem(validateJobRequest("render", { data: {} })), /exactly one of template_id, html, url/);
    assert.match(problem(validateJobRequest("render", { template_id: "a", html: "x", data: {} })), /exactly one/);
  });

  it("checks the template_id pattern at both ends of its length", () => {
    assert.ok(!(validateJobRequest("render", { template_id: `a${"b".repeat(63)}`, data: {} }) instanceof AppError));
    assert.match(problem(validateJobRequest("render", { template_id: `a${"b".repeat(64)}`, data: {} })), /^template_id/);
    assert.match(problem(validateJobRequest("render", { template_id: "-abc", data: {} })), /^template_id/);
    assert.match(problem(validateJobRequest("render", { template_id: "Invoice", data: {} })), /^template_id/);
  });

  it("limits html to 524,288 UTF-8 bytes", () => {
    assert.ok(!(validateJobRequest("render", { html: "a".repeat(MAX_HTML_BYTES), data: {} }) instanceof AppError));
    assert.match(problem(validateJobRequest("render", { html: "a".repeat(MAX_HTML_BYTES + 1), data: {} })), /^html: 524289 bytes/);
    assert.match(problem(validateJobRequest("render", { html: "é".repeat(MAX_HTML_BYTES / 2 + 1), data: {} })), /^html/);
  });

  it("requires data to be an object", () => {
    for (const data of [undefined, null, [], "x", 3]) assert.match(problem(validateJobRequest("render", { html: "x", data })), /^data/);
  });
});

describe("validateJobRequest: url and options", () => {
  const ok = (kind: "render" | "image", body: Record<string, unknown>) => {
    const result = validateJobRequest(kind, body);
    assert.ok(!(result instanceof AppError), result instanceof AppError ? result.message : "");
    return result;
  };

  it("takes exactly one source of template_id, html and url", () => {
    assert.equal(ok("render", { url: "https://example.com/a?b=c", data: {} }).url, "https://example.com/a?b=c");
    assert.match(problem(validateJobRequest("render", { url: "https://example.com/", html: "x", data: {} })), /exactly one of template_id, html, url/);
    assert.match(problem(validateJobRequest("image", { data: {} })), /exactly one of template_id, url/);
    assert.equal(ok("image", { url: "http://example.com/", data: {} }).url, "http://example.com/");
  });

  it("refuses a url that is not http(s), too long, or carries credentials", () => {
    assert.match(problem(validateJobRequest("render", { url: "file:///etc/passwd", data: {} })), /^url: scheme file is not allowed/);
    assert.match(problem(validateJobRequest("render", { url: "https://u:p@example.com/", data: {} })), /^url: must not carry user info/);
    assert.match(problem(validateJobRequest("render", { url: "not a url", data: {} })), /^url: must be an absolute/);
    const long = `https://example.com/${"a".repeat(2048 - 20)}`;
    assert.equal(long.length, 2048);
    ok("render", { url: long, data: {} });
    assert.match(problem(validateJobRequest("render", { url: `${long}a`, data: {} })), /^url: must be at most 2048 characters/);
  });

  it("maps every render option onto the job contract", () => {
    const request = ok("render", {
      html: "<p>x</p>",
      data: {},
      options: {
        width: "8.5in",
        height: "11in",
        landscape: true,
        margin: { top: "1cm", left: "0" },
        scale: 0.5,
        print_background: false,
        page_ranges: "1-3, 5",
        prefer_css_page_size: false,
        media: "screen",
        header_html: "<span class=pageNumber></span>",
        footer_html: "{{name}}",
        wait_for: { selector: "#ready" },
        metadata: { title: "T", keywords: ["a", "b"] },
        filename: 'a/b:"c".pdf',
        pdfua: true,
        outline: true,
        watermark: { text: "DRAFT", opacity: 0.3 },
        encrypt: { owner_password: "secret", permissions: { print: true, copy: false, modify: false, annotate: false } },
      },
    });
    const options = request.options!;
    assert.equal(options.width, "8.5in");
    assert.equal(options.landscape, true);
    assert.deepEqual([options.margin?.top, options.margin?.right, options.margin?.left], ["1cm", undefined, "0"]);
    assert.equal(options.scale, 0.5);
    assert.equal(options.printBackground, false);
    assert.equal(options.pageRanges, "1-3,5");
    assert.equal(options.media, "screen");
    assert.equal(options.waitFor?.selector, "#ready");
    assert.deepEqual(options.metadata?.keywords, ["a", "b"]);
    assert.equal(options.filename, "a_b__c_.pdf");
    assert.equal(options.watermark?.opacity, 0.3);
    assert.equal(options.encrypt?.ownerPassword, "secret");
    assert.equal(options.encrypt?.permissions?.print, true);
    assert.equal(options.outline, true);
    assert.equal(ok("render", { html: "x", data: {} }).options, undefined);
  });

  it("names unknown options, at any depth", () => {
    const message = (options: unknown) => problem(validateJobRequest("render", { html: "x", data: {}, options }));
    assert.match(message({ colour: "red", format: "A4" }), /^options: unknown option: colour$/);
    assert.match(message({ margin: { middle: "1mm" } }), /^options\.margin: unknown option: middle$/);
    assert.match(message({ wait_for: { selector: "a", forever: true } }), /^options\.wait_for: unknown option: forever$/);
    const image = validateJobRequest("image", { template_id: "og-image", data: {}, options: { scale: 2 } });
    assert.ok(image instanceof AppError);
    assert.match(image.message, /^options: unknown option: scale$/);
    assert.match(image.hint, /format, quality, omit_background/);
  });

  it("checks each option's range", () => {
    const message = (options: unknown) => problem(validateJobRequest("render", { html: "x", data: {}, options }));
    assert.match(message({ format: "B6" }), /^options\.format: must be one of A0, A1, A2, A3, A4, A5, A6, B4, B5, Letter, Legal, Tabloid, Ledger, Executive/);
    assert.match(message({ width: "10em", height: "1in" }), /^options\.width: must be a CSS length/);
    assert.match(message({ width: "10in" }), /^options\.height: width and height go together/);
    assert.match(message({ format: "A4", width: "1in", height: "1in" }), /^options\.format: give format or width and height/);
    assert.match(message({ scale: 2.5 }), /^options\.scale: must be from 0.1 to 2/);
    assert.match(message({ scale: 0.05 }), /^options\.scale/);
    assert.match(message({ page_ranges: "3-1" }), /^options\.page_ranges/);
    assert.match(message({ page_ranges: "0" }), /^options\.page_ranges/);
    assert.match(message({ media: "tv" }), /^options\.media/);
    assert.match(message({ wait_for: {} }), /^options\.wait_for: must name exactly one condition/);
    assert.match(message({ wait_for: { selector: "a", delay_ms: 1 } }), /^options\.wait_for: must name exactly one condition/);
    assert.match(message({ wait_for: { delay_ms: 10_001 } }), /^options\.wait_for\.delay_ms: must be from 0 to 10000/);
    assert.match(message({ wait_for: { network_idle: false } }), /^options\.wait_for\.network_idle: must be true/);
    assert.match(message({ filename: "x".repeat(201) }), /^options\.filename: must be at most 200 characters/);
    assert.match(message({ filename: " .. " }), /^options\.filename/);
    assert.match(message({ pdfa: "PDF/A-4" }), /^options\.pdfa/);
    assert.match(
      message({ pdfa: "PDF/A-2b", encrypt: { owner_password: "o", permissions: { print: true, copy: true, modify: true, annotate: true } } }),
      /^options\.encrypt: PDF\/A does not allow/,
    );
    assert.match(message({ encrypt: { owner_password: "o" } }), /^options\.encrypt\.permissions/);
    assert.match(message({ watermark: { text: "x", opacity: 2 } }), /^options\.watermark\.opacity: must be from 0 to 1/);
    assert.match(message({ metadata: { keywords: "a,b" } }), /^options\.metadata\.keywords: must be an array of strings/);
  });

  it("refuses paper the engine cannot print: a side outside 1-200 inches, margins that leave under half an inch", () => {
    const message = (options: unknown) => problem(validateJobRequest("render", { html: "x", data: {}, options }));
    assert.match(message({ width: "0", height: "10in" }), /^options\.width: must be from 1 to 200 inches$/);
    assert.match(message({ width: "10in", height: "201in" }), /^options\.height: must be from 1 to 200 inches$/);
    assert.match(message({ width: "20mm", height: "297mm" }), /^options\.width: must be from 1 to 200 inches$/);
    assert.match(message({ width: "19201px", height: "1in" }), /^options\.width: must be from 1 to 200 inches$/);
    assert.match(message({ format: "A4", landscape: false, margin: { left: "105mm", right: "105mm" } }), /^options\.margin: must leave at least 0\.5 inch/);
    assert.match(message({ width: "4in", height: "4in", margin: { top: "2in", bottom: "1.6in" } }), /^options\.margin: must leave at least 0\.5 inch/);
    assert.match(message({ margin: { top: "100in", bottom: "100in" } }), /^options\.margin: must leave at least 0\.5 inch/);
    const part = problem(validateJobRequest("render", { data: {}, documents: [{ html: "x", options: { width: "0", height: "1in" } }] }));
    assert.match(part, /^documents\.0\.options\.width: must be from 1 to 200 inches$/);
    for (const options of [
      { width: "1in", height: "200in" },
      { width: "96px", height: "14400pt" },
      { format: "A5", margin: { top: "80mm", bottom: "80mm" } },
      // Too wide for A4 upright, but a template's orientation may be landscape.
      { format: "A4", margin: { left: "4in", right: "4in" } },
      { margin: { top: "90in", bottom: "90in" } },
    ]) {
      ok("render", { html: "x", data: {}, options });
    }
  });

  it("refuses a password qpdf would take for an option or split: a leading -, a control character; never echoing it", () => {
    const permissions = { print: true, copy: true, modify: true, annotate: true };
    const refusal = (encrypt: Record<string, unknown>) => {
      const result = validateJobRequest("render", { html: "x", data: {}, options: { encrypt: { permissions, ...encrypt } } });
      problem(result);
      return result as AppError;
    };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ owner_password: "-secret-owner" }, /^options\.encrypt\.owner_password: must not start with -$/],
      [{ owner_password: "--" }, /^options\.encrypt\.owner_password: must not start with -$/],
      [{ owner_password: "o", user_password: "-secret-user" }, /^options\.encrypt\.user_password: must not start with -$/],
      [{ owner_password: "secret\nowner" }, /^options\.encrypt\.owner_password: must not contain control characters$/],
      [{ owner_password: "o", user_password: "secret\ruser" }, /^options\.encrypt\.user_password: must not contain control characters$/],
      [{ owner_password: "secret\towner" }, /^options\.encrypt\.owner_password: must not contain control characters$/],
    ];
    for (const [encrypt, expected] of cases) {
      const error = refusal(encrypt);
      assert.match(error.message, expected);
      assert.match(error.hint, /does not start with - and has no control characters/);
      assert.doesNotMatch(JSON.stringify(error) + error.message, /secret/);
    }
    assert.ok(!(validateJobRequest("render", { html: "x", data: {}, options: { encrypt: { owner_password: "a-b c!", permissions } } }) instanceof AppError));
  });

  it("checks the image options and keeps the viewport options for a url", () => {
    const request = ok("image", {
      url: "https://example.com/",
      data: {},
      options: { format: "webp", quality: 80, omit_background: true, width: 800, height: 600, device_scale_factor: 2 },
    });
    assert.equal(request.options?.imageFormat, "webp");
    assert.equal(request.options?.quality, 80);
    assert.equal(request.options?.omitBackground, true);
    assert.equal(request.options?.imageWidth, 800);
    assert.equal(request.options?.deviceScaleFactor, 2);
    const message = (body: Record<string, unknown>) => problem(validateJobRequest("image", { data: {}, ...body }));
    assert.match(message({ template_id: "og-image", options: { width: 100 } }), /^options\.width: applies to a url only/);
    assert.match(message({ template_id: "og-image", options: { quality: 50 } }), /^options\.quality: quality applies to jpeg and webp only/);
    assert.match(
      message({ template_id: "og-image", options: { format: "jpeg", omit_background: true } }),
      /^options\.omit_background: a jpeg has no transparency/,
    );
    assert.match(message({ template_id: "og-image", options: { format: "gif" } }), /^options\.format: must be one of png, jpeg, webp/);
    assert.match(message({ url: "https://example.com/", options: { device_scale_factor: 4 } }), /^options\.device_scale_factor: must be 1, 2 or 3/);
  });
});

describe("validateJobRequest: documents (a merged PDF)", () => {
  const parts = (n: number) => Array.from({ length: n }, (_, i) => ({ html: `<p>{{n}} ${i}</p>`, data: { n: i } }));
  const message = (body: Record<string, unknown>) => problem(validateJobRequest("render", { data: {}, ...body }));

  it("maps 1 to 20 parts, in order, each with its source, data and page options", () => {
    const request = validateJobRequest("render", {
      data: {},
      documents: [
        { template_id: "invoice", template_version: 2, data: { total: 1 }, options: { format: "A5", landscape: true } },
        { html: "<p>x</p>" },
        { url: "https://example.com/terms" },
      ],
      options: { metadata: { title: "Bundle" }, watermark: { text: "COPY" }, pdfa: "PDF/A-2b", filename: "bundle.pdf" },
    });
    assert.ok(!(request instanceof AppError));
    assert.equal(request.documents?.length, 3);
    assert.deepEqual(
      request.documents?.map((p) => [p.templateId, p.templateVersion, p.html, p.url, p.dataJson]),
      [
        ["invoice", 2, undefined, undefined, '{"total":1}'],
        [undefined, undefined, "<p>x</p>", undefined, "{}"],
        [undefined, undefined, undefined, "https://example.com/terms", "{}"],
      ],
    );
    assert.equal(request.documents?.[0]?.options?.format, "A5");
    assert.equal(request.options?.pdfa, "PDF/A-2b");
    assert.ok(!(validateJobRequest("render", { data: {}, documents: parts(20) }) instanceof AppError));
  });

  it("refuses no part, more than 20, a part without exactly one source, and unknown part fields", () => {
    assert.match(message({ documents: [] }), /^documents: must have at least one part/);
    assert.match(message({ documents: parts(21) }), /^documents: must have at most 20 parts/);
    assert.match(message({ documents: [{ html: "x", url: "https://example.com/" }] }), /^documents\.0: exactly one of template_id, html, url/);
    assert.match(message({ documents: [{ data: {} }] }), /exactly one of template_id, html, url/);
    assert.match(message({ documents: [{ html: "x", webhook_url: "https://example.com/" }] }), /^documents\.0: unknown option: webhook_url/);
    assert.match(message({ documents: [{ html: "x", options: { pdfa: "PDF/A-2b" } }] }), /^documents\.0\.options: unknown option: pdfa/);
    assert.match(message({ html: "x", documents: parts(1) }), /exactly one of template_id, html, url, documents/);
  });

  it("takes only document-level options beside documents: page options go in a part, and no pdfua or outline", () => {
    assert.match(message({ documents: parts(2), options: { format: "A4" } }), /^options\.format: applies to one part: give it in the part's options/);
    assert.match(message({ documents: parts(2), options: { wait_for: { delay_ms: 10 } } }), /^options\.wait_for: applies to one part/);
    assert.match(message({ documents: parts(2), options: { pdfua: true } }), /^options\.pdfua: a merged document keeps no tag structure/);
    assert.match(message({ documents: parts(2), options: { outline: true } }), /^options\.outline: a merged document keeps no outline/);
    assert.match(message({ documents: [{ html: "x", options: { outline: true } }] }), /^documents\.0\.options: unknown option: outline/);
  });

  it("refuses pdfa with pdfua", () => {
    assert.match(message({ html: "x", options: { pdfa: "PDF/A-1b", pdfua: true } }), /^options\.pdfua: PDF\/A and PDF\/UA cannot be combined/);
  });
});

describe("options.output_ttl_seconds", () => {
  it("takes whole seconds from 60 to 7 days on render and image, carried to the job's options; none on a merged part", () => {
    for (const seconds of [60, 3_600, 604_800]) {
      const render = validateJobRequest("render", { html: "x", data: {}, options: { output_ttl_seconds: seconds } });
      assert.ok(!(render instanceof AppError));
      assert.equal(render.options?.outputTtlSeconds, seconds);
      const image = validateJobRequest("image", { url: "https://example.com/", options: { output_ttl_seconds: seconds } });
      assert.ok(!(image instanceof AppError));
      assert.equal(image.options?.outputTtlSeconds, seconds);
    }
    for (const seconds of [59, 604_801, 90.5, "3600", null]) {
      assert.match(
        problem(validateJobRequest("render", { html: "x", data: {}, options: { output_ttl_seconds: seconds } })),
        /^options\.output_ttl_seconds: must be a whole number of seconds from 60 to 604800/,
      );
    }
    const part = validateJobRequest("render", { data: {}, documents: [{ html: "x", options: { output_ttl_seconds: 60 } }, { html: "y" }] });
    assert.equal(problem(part), "documents.0.options: unknown option: output_ttl_seconds");
  });

  it("is bounded by the key's plan: over its maximum is PAYLOAD_INVALID naming the field, the plan and the maximum", () => {
    assert.equal(outputTtlBeyondPlan(undefined, "demo"), undefined);
    assert.equal(outputTtlBeyondPlan(86_400, "free"), undefined);
    assert.equal(outputTtlBeyondPlan(259_200, "starter"), undefined);
    assert.equal(outputTtlBeyondPlan(604_800, "pro"), undefined);
    const over = outputTtlBeyondPlan(86_401, "demo");
    assert.ok(over instanceof AppError);
    assert.equal(over.code, "PAYLOAD_INVALID");
    assert.equal(over.message, "options.output_ttl_seconds: 86401 is over the Demo plan's maximum of 86400 seconds");
    assert.match(outputTtlBeyondPlan(604_800, "starter")!.message, /Starter plan's maximum of 259200 seconds/);
  });
});
