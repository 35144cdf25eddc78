import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { RenderFailure, type RenderEngine } from "./index";
import { pdfText, startEngine } from "../test-support/engine";

function scriptError(line: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof RenderFailure, `expected a RenderFailure, got ${String(err)}`);
    assert.equal(err.reason, "script_error", err.message);
    assert.equal(err.retryable, false);
    assert.match(err.message, /^the document's script threw an uncaught exception: /);
    assert.match(err.message, line);
    assert.ok(!err.message.includes("\n"), "only the exception's first line");
    return true;
  };
}

describe("render engine: script errors", () => {
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 1 });
  });
  after(() => engine.close());

  it("fails a document whose script throws, naming the exception's first line", async () => {
    await assert.rejects(
      engine.render({ kind: "pdf", html: `<p>x</p><script>throw new TypeError("total is not a number\\nsecond line")</script>` }),
      scriptError(/: TypeError: total is not a number$/),
    );
    await assert.rejects(
      engine.render({ kind: "png", html: `<script>undefinedFunction()</script>`, options: { imageWidth: 100, imageHeight: 50 } }),
      scriptError(/ReferenceError: undefinedFunction is not defined/),
    );
    await assert.rejects(engine.render({ kind: "pdf", html: `<script>throw "plain"</script>` }), scriptError(/plain/));
  });

  it("fails on an error thrown by a load handler and on an unhandled promise rejection", async () => {
    await assert.rejects(
      engine.render({ kind: "pdf", html: `<script>addEventListener("load", () => { throw new Error("late") })</script>` }),
      scriptError(/Error: late$/),
    );
    await assert.rejects(engine.render({ kind: "pdf", html: `<script>Promise.reject(new RangeError("nope"))</script>` }), scriptError(/RangeError: nope/));
  });

  it("renders scripts that throw nothing uncaught, and does not carry an error over to the next job", async () => {
    const caught = await engine.render({
      kind: "pdf",
      html: `<p id="p"></p><script>try { null.x } catch { document.getElementById("p").textContent = "caught it" }</script>`,
    });
    assert.match(pdfText(caught.data), /caught it/);
    await assert.rejects(engine.render({ kind: "pdf", html: `<script>throw new Error("one")</script>` }), scriptError(/Error: one$/));
    assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>clean</p>" })).data), /clean/);
  });

  it("renders anyway when the job says so (scriptErrors: ignore)", async () => {
    const out = await engine.render({
      kind: "pdf",
      scriptErrors: "ignore",
      html: `<p>printed</p><script>throw new Error("tolerated")</script><script>Promise.reject(new RangeError("also"))</script>`,
    });
    assert.match(pdfText(out.data), /printed/);
    assert.deepEqual(out.scriptErrors, ["Error: tolerated", "RangeError: also"], "listed in order");
    assert.equal((await engine.render({ kind: "pdf", scriptErrors: "ignore", html: "<p>clean</p>" })).scriptErrors, undefined);
  });
});
