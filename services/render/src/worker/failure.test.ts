import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "@pressroom/platform";
import { RenderFailure } from "../engine";
import { failureOf, worthRetrying } from "./worker";

describe("failureOf: whose fault a failed render is", () => {
  it("charges document faults as 422 RENDER_FAILED, naming the limit", () => {
    for (const reason of ["deadline", "page_cap", "output_cap", "blocked_navigation", "invalid_document"] as const) {
      const failed = failureOf(new RenderFailure(reason, `hit the ${reason} limit`));
      assert.deepEqual(failed, { code: "RENDER_FAILED", message: `hit the ${reason} limit`, refund: false }, reason);
    }
    assert.equal(failureOf(new AppError("RENDER_FAILED", "template error: Parse error", "")).code, "RENDER_FAILED");
    for (const reason of ["deadline", "output_cap", "resource_budget"] as const) assert.equal(worthRetrying(new RenderFailure(reason, "limit")), false, reason);
  });

  it("retries a renderer crash, and charges it when it crashes on every attempt (a memory bomb)", () => {
    const crash = new RenderFailure("renderer_crashed", "the renderer crashed while rendering the document");
    assert.equal(worthRetrying(crash), true);
    assert.deepEqual(failureOf(crash), { code: "RENDER_FAILED", message: "the renderer crashed while rendering the document", refund: false });
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
