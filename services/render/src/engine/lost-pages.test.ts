import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { RenderEngine } from "./index";
import { browserProcesses, failsWith, pdfText, startEngine } from "../test-support/engine";

describe("render engine: a page lost while its document runs", () => {
  // One slot and no spare: a lost page that were used again would fail every later job.
  let engine: RenderEngine;
  before(async () => {
    engine = await startEngine({ slots: 1, sparePages: 0, rendererHeapMiB: 64 });
  });
  after(() => engine.close());

  it("fails a document that closes its own window as its own doing, and never uses that page again", async () => {
    const before = engine.stats();
    await assert.rejects(engine.render({ kind: "pdf", html: "<p>work</p><script>window.close()</script>" }), (err: unknown) => {
      failsWith("window_closed")(err);
      assert.match((err as Error).message, /closed its own window/);
      return true;
    });
    await assert.rejects(
      engine.render({
        kind: "pdf",
        html: "<p>later</p><script>setTimeout(() => window.close(), 50); const t = Date.now(); while (Date.now() - t < 300) {}</script>",
      }),
      failsWith("window_closed"),
    );
    for (const n of [1, 2, 3]) assert.match(pdfText((await engine.render({ kind: "pdf", html: `<p>next ${n}</p>` })).data), new RegExp(`next ${n}`));
    assert.equal(engine.stats().relaunches, before.relaunches, "the browser stayed up: only the pages were replaced");
  });

  it("fails a document whose renderer runs out of memory as its own doing, with the browser up", async () => {
    const before = engine.stats();
    await assert.rejects(
      engine.render({ kind: "pdf", html: "<script>let a=[];for(;;)a.push(new Array(1e6).fill(1))</script>", deadlineMs: 20_000 }),
      failsWith("renderer_crashed"),
    );
    assert.match(pdfText((await engine.render({ kind: "pdf", html: "<p>after the bomb</p>" })).data), /after the bomb/);
    assert.equal(engine.stats().relaunches, before.relaunches);
    assert.equal(engine.stats().browserPid, before.browserPid);
  });

  it("cannot tell whose fault pages lost together are: retryable", async () => {
    const two = await startEngine({ slots: 2, sparePages: 0 });
    try {
      const busy = "<script>const t = Date.now(); while (Date.now() - t < 8000) {}</script>";
      const jobs = [two.render({ kind: "pdf", html: busy, deadlineMs: 20_000 }), two.render({ kind: "pdf", html: busy, deadlineMs: 20_000 })];
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const renderers = browserProcesses(two.stats().browserPid!).filter((p) => p.args.includes("--type=renderer"));
      assert.ok(renderers.length >= 2, `renderers: ${renderers.length}`);
      for (const { pid } of renderers) process.kill(pid, "SIGKILL");
      await Promise.all(jobs.map((job) => assert.rejects(job, failsWith("page_lost"))));
      assert.match(pdfText((await two.render({ kind: "pdf", html: "<p>after</p>" })).data), /after/);
    } finally {
      await two.close();
    }
  });
});
