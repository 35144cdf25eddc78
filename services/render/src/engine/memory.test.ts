import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RenderEngine } from "./index";
import { failsWith, pdfText, startEngine } from "../test-support/engine";

/** 100 MB chunks, written so that their pages are really taken, up to 3 GB: three times the limit below. */
const bomb = (kind: "ArrayBuffer" | "WebAssembly", caught: boolean) => `<p id="out">taken</p><script>
  const held = [];
  const take = () => {
    if (${JSON.stringify(kind)} === "ArrayBuffer") held.push(new Uint8Array(1e8).fill(1));
    else { const m = new WebAssembly.Memory({ initial: 1526 }); new Uint8Array(m.buffer).fill(1); held.push(m); }
  };
  ${caught ? "try { for (let i = 0; i < 30; i++) take() } catch {}" : "for (let i = 0; i < 30; i++) take()"}
  out.textContent = "taken " + held.length * 100 + " MB";
</script>`;

describe("render engine: memory outside the JavaScript heap is bounded per renderer", () => {
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 1, processMemoryMiB: 1024 });
  });
  after(() => engine.close());

  for (const kind of ["ArrayBuffer", "WebAssembly"] as const) {
    it(`fails a ${kind} memory bomb naming the renderer memory limit, and keeps serving on the same browser`, async () => {
      const before = engine.stats();
      await assert.rejects(engine.render({ kind: "pdf", html: bomb(kind, false) }), (err: unknown) => {
        failsWith("memory_limit")(err);
        assert.match((err as Error).message, /more than 1024 MiB \(the renderer memory limit\)/);
        return true;
      });
      assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>after the bomb</p>" })).data), /after the bomb/);
      assert.equal(engine.stats().relaunches, before.relaunches, "the browser stayed up");
    });
  }

  it("leaves a document that catches the refusal with less than the limit, even when its script errors are ignored", async () => {
    const out = await engine.render({ kind: "pdf", html: bomb("ArrayBuffer", true) });
    const taken = Number(/taken (\d+) MB/.exec(pdfText(out.data))?.[1]);
    assert.ok(taken < 1024, `the document took ${taken} MB`);
    await assert.rejects(engine.render({ kind: "pdf", html: bomb("ArrayBuffer", false), scriptErrors: "ignore" }), failsWith("memory_limit"));
  });
});
