import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "@pressroom/platform";
import { RenderFailure } from "../engine";
import { failureOf, worthRetrying } from "./failure";

describe("failureOf: whose fault a failed render is", () => {
  it("charges document faults as 422 RENDER_FAILED, naming the limit", () => {
    for (const reason of ["deadline", "page_cap", "output_cap", "blocked_navigation", "invalid_document"] as const) {
      const failed = failureOf(new RenderFailure(reason, `hit the ${reason} limit`));
      assert.deepEqual(failed, { code: "RENDER_FAILED", message: `hit the ${reason} limit`, refund: false }, reason);
    }
    assert.equal(failureOf(new AppError("RENDER_FAILED", "template error: Parse error", "")).code, "RENDER_FAILED");
    for (const reason of ["deadline", "output_cap", "resource_budget"] as const) assert.equal(worthRetrying(new RenderFailure(reason, "limit")), false, reason);
  });

  it("charges a document's own renderer crash or closed window at once, without retrying", () => {
    for (const reason of ["renderer_crashed", "window_closed"] as const) {
      const lost = new RenderFailure(reason, `the document's page went: ${reason}`);
      assert.equal(worthRetrying(lost), false, reason);
      assert.deepEqual(failureOf(lost), { code: "RENDER_FAILED", message: `the document's page went: ${reason}`, refund: false }, reason);
    }
  });

  it("retries a page lost together with others, and charges it when it is lost on every attempt", () => {
    const lost = new RenderFailure("page_lost", "the document's page was lost together with other pages while it ran");
    assert.equal(worthRetrying(lost), true);
    assert.deepEqual(failureOf(lost), { code: "RENDER_FAILED", message: lost.message, refund: false });
  });

  it("retries our own failures and finally refunds them as INTERNAL_ERROR: browser crashes, no browser, shutting down, dependencies, dead attempts", () => {
    const ours = [
      new RenderFailure("crashed", "the browser stopped while rendering the document"),
      new RenderFailure("crashed", "no browser was available to render the document"),
      new RenderFailure("crashed", "the render engine is shutting down"),
      new AppError("UNAVAILABLE", "storage is unavailable", ""),
      new AppError("INTERNAL_ERROR", "storage failed", ""),
      new Error("all 3 render attempts died"),
    ];
    for (const err of ours) {
      assert.deepEqual(failureOf(err), { code: "INTERNAL_ERROR", message: "the render failed on our side", refund: true }, err.message);
      assert.equal(worthRetrying(err), true, err.message);
    }
  });
});
