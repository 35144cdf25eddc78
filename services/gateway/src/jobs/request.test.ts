import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "@pressroom/platform";
import { MAX_HTML_BYTES } from "../limits";
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

  it("names unknown fields", () => {
    assert.match(problem(validateJobRequest("render", { html: "x", data: {}, colour: 1, size: 2 })), /unknown fields: colour, size/);
    assert.match(problem(validateJobRequest("image", { template_id: "og-image", html: "x", data: {} })), /unknown field: html/);
  });

  it("requires exactly one of template_id and html", () => {
    assert.match(problem(validateJobRequest("render", { data: {} })), /exactly one of template_id or html/);
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
