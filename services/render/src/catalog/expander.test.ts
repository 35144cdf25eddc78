import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { AppError } from "@pressroom/platform";
import { RenderFailure } from "../engine";
import { TemplateExpander } from "./expander";

/** The template bomb of issue 13: 3,000³ iterations, no output. */
const BOMB = "<p>{{#each a}}{{#each @root.a}}{{#each @root.a}}{{/each}}{{/each}}{{/each}}</p>";
const BOMB_DATA = JSON.stringify({ a: new Array(3_000).fill(0) });

describe("TemplateExpander", () => {
  const expander = new TemplateExpander({ threads: 2, maxOutputBytes: 1024 * 1024 });
  after(() => expander.close());

  it("fills a template with its data, HTML-escaped", async () => {
    const html = await expander.expand({ source: "<h1>Hello {{name}}</h1>", dataJson: JSON.stringify({ name: "<Ada>" }), timeoutMs: 30_000 });
    assert.equal(html, "<h1>Hello &lt;Ada&gt;</h1>");
  });

  it("stops a bomb at its deadline off the event loop, while other expansions keep flowing, and replaces the thread", async () => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const bomb = expander.expand({ source: BOMB, dataJson: BOMB_DATA, timeoutMs: 1_500 });
    const during: string[] = [];
    for (let i = 0; i < 5; i++) during.push(await expander.expand({ source: "<p>{{n}}</p>", dataJson: JSON.stringify({ n: i }), timeoutMs: 30_000 }));
    await assert.rejects(
      bomb,
      (err: unknown) => err instanceof RenderFailure && err.reason === "deadline" && /template expansion exceeded the 1\.5 s render deadline/.test(err.message),
    );
    clearInterval(ticker);
    assert.deepEqual(during, ["<p>0</p>", "<p>1</p>", "<p>2</p>", "<p>3</p>", "<p>4</p>"]);
    assert.ok(ticks > 0, "the event loop kept turning during the bomb");
    // Both threads work again: two expansions at once.
    const both = await Promise.all([0, 1].map((n) => expander.expand({ source: "{{n}}", dataJson: JSON.stringify({ n }), timeoutMs: 30_000 })));
    assert.deepEqual(both, ["0", "1"]);
    assert.equal(expander.running, 0);
  });

  it("fails an expansion past the output cap, naming the cap", async () => {
    const data = JSON.stringify({ rows: new Array(20_000).fill("x".repeat(100)) });
    await assert.rejects(
      expander.expand({ source: "{{#each rows}}<p>{{this}}</p>{{/each}}", dataJson: data, timeoutMs: 30_000 }),
      (err: unknown) => err instanceof RenderFailure && err.reason === "output_cap" && /larger than 1 MiB \(the template output cap\)/.test(err.message),
    );
  });

  it("terminates a thread that exceeds its heap and fails the job naming the memory limit", async () => {
    const small = new TemplateExpander({ threads: 1, maxOutputBytes: 1024 * 1024 * 1024, memoryMiB: 32 });
    try {
      const data = JSON.stringify({ a: new Array(3_000).fill(0) });
      await assert.rejects(
        small.expand({ source: "{{#each a}}{{#each @root.a}}{{@index}},{{/each}}{{/each}}", dataJson: data, timeoutMs: 60_000 }),
        (err: unknown) => err instanceof RenderFailure && err.reason === "output_cap" && /more than 32 MiB \(the template memory limit\)/.test(err.message),
      );
      assert.equal(await small.expand({ source: "ok", dataJson: "{}", timeoutMs: 30_000 }), "ok");
    } finally {
      await small.close();
    }
  });

  it("has no log helper (customer text would reach the service log) and no prototype access", async () => {
    await assert.rejects(
      expander.expand({ source: '{{log "customer text"}}', dataJson: "{}", timeoutMs: 30_000 }),
      (err: unknown) => err instanceof AppError && err.code === "RENDER_FAILED" && /Missing helper: "log"/.test(err.message),
    );
    assert.equal(await expander.expand({ source: "[{{constructor.name}}]", dataJson: "{}", timeoutMs: 30_000 }), "[]");
  });

  it("reports a template syntax error as the document's fault", async () => {
    await assert.rejects(
      expander.expand({ source: "{{#each}", dataJson: "{}", timeoutMs: 30_000 }),
      (err: unknown) => err instanceof AppError && err.code === "RENDER_FAILED" && /^template error: /.test(err.message),
    );
  });
});
