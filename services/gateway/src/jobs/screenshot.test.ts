import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { AppError } from "@pressroom/platform";
import { MAX_HTML_BYTES } from "../limits";
import { validateScreenshotRequest } from "./screenshot";
import { renderCommandOf } from "./submit";

function ok(body: Record<string, unknown>) {
  const result = validateScreenshotRequest(body);
  assert.ok(!(result instanceof AppError), result instanceof AppError ? result.message : "");
  return result;
}

function refused(body: Record<string, unknown>): AppError {
  const result = validateScreenshotRequest(body);
  assert.ok(result instanceof AppError, "expected a validation error");
  assert.equal(result.code, "PAYLOAD_INVALID");
  assert.ok(result.hint, "a refusal says what to do");
  return result;
}

describe("validateScreenshotRequest", () => {
  it("takes html (data defaulting to {}) or a url, with the options of an image and a region", () => {
    const html = ok({ html: "<h1>{{title}}</h1>", data: { title: "Hi" } });
    assert.deepEqual(
      [html.kind, html.html, html.url, html.dataJson, html.options],
      ["screenshot", "<h1>{{title}}</h1>", undefined, '{"title":"Hi"}', undefined],
    );
    assert.equal(ok({ html: "<p>x</p>" }).dataJson, "{}");
    const page = ok({
      url: "https://example.com/",
      async: true,
      options: { width: 800, height: 600, device_scale_factor: 2, format: "jpeg", quality: 70, selector: "#chart", wait_for: { selector: "#chart" } },
    });
    assert.equal(page.async, true);
    assert.deepEqual(
      [page.options?.imageWidth, page.options?.imageHeight, page.options?.deviceScaleFactor, page.options?.imageFormat, page.options?.quality],
      [800, 600, 2, "jpeg", 70],
    );
    assert.equal(page.options?.selector, "#chart");
    assert.deepEqual(ok({ html: "x", options: { clip: { x: 0, y: 10.5, width: 20, height: 30 } } }).options?.clip, { x: 0, y: 10.5, width: 20, height: 30 });
    assert.equal(ok({ html: "x", options: { full_page: true } }).options?.fullPage, true);
    assert.equal(ok({ html: "x", options: { full_page: false, clip: { x: 0, y: 0, width: 1, height: 1 } } }).options?.fullPage, false);
  });

  it("is an image job in the job contract, its html and region carried to the worker", () => {
    const request = ok({ html: "<p>x</p>", options: { full_page: true, omit_background: true } });
    const command = renderCommandOf({
      sealTo: {
        render: generateKeyPairSync("ec", { namedCurve: "prime256v1" }).publicKey,
        webhook: generateKeyPairSync("ec", { namedCurve: "prime256v1" }).publicKey,
      },
      jobId: "job_1",
      keyId: "key_1",
      plan: "pro",
      request,
      templateGeneration: 0,
      templateVersion: 0,
      templateOwner: "",
      outcomeInbox: "inbox",
    });
    const accepted = command.accepted!.accepted!;
    assert.equal(accepted.kind, jobEventsV1.JobKind.JOB_KIND_IMAGE);
    assert.equal(accepted.html, "<p>x</p>");
    assert.deepEqual([accepted.options?.fullPage, accepted.options?.omitBackground], [true, true]);
  });

  it("refuses both sources, neither, and a template, naming them", () => {
    assert.match(refused({ html: "x", url: "https://example.com/" }).message, /^exactly one of html, url is required/);
    assert.match(refused({ data: {} }).message, /^exactly one of html, url is required/);
    assert.match(refused({ template_id: "og-image", data: {} }).message, /^unknown field: template_id/);
  });

  it("refuses two regions, naming the second, and a region out of range", () => {
    const clip = { x: 0, y: 0, width: 100, height: 50 };
    assert.match(
      refused({ html: "x", options: { selector: "#a", clip } }).message,
      /^options\.clip: give one of full_page, selector and clip, not selector and clip/,
    );
    assert.match(refused({ html: "x", options: { full_page: true, clip } }).message, /^options\.clip: give one of .* not full_page and clip/);
    assert.match(refused({ html: "x", options: { full_page: true, selector: "#a" } }).message, /^options\.selector: give one/);
    assert.match(refused({ html: "x", options: { clip: { ...clip, width: 0 } } }).message, /^options\.clip\.width: must be from 1 to 10000/);
    assert.match(refused({ html: "x", options: { clip: { ...clip, x: -1 } } }).message, /^options\.clip\.x: must be 0 or more/);
    assert.match(refused({ html: "x", options: { clip: { x: 0, y: 0, width: 10 } } }).message, /^options\.clip\.height/);
    assert.match(refused({ html: "x", options: { clip: { ...clip, z: 1 } } }).message, /^options\.clip: unknown option: z/);
    assert.match(refused({ html: "x", options: { selector: "" } }).message, /^options\.selector: must not be empty/);
    assert.match(refused({ html: "x", options: { full_page: "yes" } }).message, /^options\.full_page: must be true or false/);
  });

  it("holds the image's rules and the raw HTML's size limit", () => {
    assert.match(refused({ html: "x", options: { format: "png", quality: 50 } }).message, /^options\.quality: quality applies to jpeg and webp only/);
    assert.match(refused({ html: "x", options: { format: "jpeg", omit_background: true } }).message, /^options\.omit_background: a jpeg has no transparency/);
    assert.match(refused({ html: "x", options: { width: 10_001 } }).message, /^options\.width: must be from 1 to 10000/);
    assert.match(refused({ html: "a".repeat(MAX_HTML_BYTES + 1) }).message, /^html: 524289 bytes is over the limit/);
    assert.match(refused({ url: "file:///etc/passwd" }).message, /^url: scheme file is not allowed/);
    assert.match(refused({ html: "x", webhook_url: "http://example.com/" }).message, /^webhook_url: /);
    assert.match(refused({ html: "x", async: "yes" }).message, /^async: must be true or false/);
  });
});
