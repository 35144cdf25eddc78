import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { ESLint } from "eslint";

/**
 * The walls lint keeps (eslint.config.mjs), each shown to bite: a violation is planted
 * in a file of the repository (linted as text, never written) and the project's own
 * configuration must report it, while the same file without it passes the rule.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const eslint = new ESLint({ cwd: ROOT });

/** The rules that report `text` as the file at `file` (relative to the repository). */
async function rulesReporting(file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: path.join(ROOT, file) });
  assert.ok(result, `${file} was linted`);
  assert.deepEqual(
    result.messages.filter((m) => m.fatal),
    [],
    `${file} parses`,
  );
  return result.messages.map((m) => m.ruleId ?? "");
}

/** Each `walled` import ([name, module]) planted in `file` is refused by a wall; each `open` one is not. */
async function assertWalled(file: string, imports: { walled: string[][]; open: string[][] }): Promise<void> {
  const planting = ([name, from]: string[]) => `import { ${name} } from "${from}";\nexport const planted = ${name};\n`;
  for (const walled of imports.walled) assert.ok((await rulesReporting(file, planting(walled))).includes("import-x/no-restricted-paths"), walled[1]);
  for (const open of imports.open) assert.deepEqual(await rulesReporting(file, planting(open)), [], open[1]);
}

describe("walls that lint keeps", () => {
  it("no source file over 400 lines", async () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const line${i} = ${i};`).join("\n") + "\n";
    assert.ok((await rulesReporting("services/render/src/worker/planted.ts", lines(401))).includes("max-lines"));
    assert.ok(!(await rulesReporting("services/render/src/worker/planted.ts", lines(400))).includes("max-lines"));
  });

  it("no import cycles", async () => {
    // engine.ts imports fifo.ts: fifo.ts importing engine.ts back closes a cycle.
    const fifo = readFileSync(path.join(ROOT, "services/render/src/engine/fifo.ts"), "utf8");
    const cycle = `${fifo}\nimport { RenderEngine } from "./engine";\nexport const planted = RenderEngine;\n`;
    assert.ok((await rulesReporting("services/render/src/engine/fifo.ts", cycle)).includes("import-x/no-cycle"));
    assert.ok(!(await rulesReporting("services/render/src/engine/fifo.ts", fifo)).includes("import-x/no-cycle"));
  });

  it("the render engine imports nothing from the worker, the producer, the catalog or post-processing", async () => {
    await assertWalled("services/render/src/engine/planted.ts", {
      walled: [
        ["RenderWorker", "../worker/worker"],
        ["EngineProducer", "../producer/engine-producer"],
        ["TemplateCatalog", "../catalog/catalog"],
        ["postProcess", "../postprocess"],
      ],
      open: [["Slot", "./slot"]],
    });
  });

  it("no service imports another service, by its package's name or by a path", async () => {
    await assertWalled("services/gateway/src/planted.ts", {
      walled: [
        ["RenderEngine", "@pressroom/render/engine"],
        ["catalogService", "../../render/src/catalog/catalog.grpc"],
        ["createServer", "../../storage/src/server"],
      ],
      open: [["planOf", "@pressroom/domain"]],
    });
  });

  it("a gateway feature imports only shared modules and its own folder", async () => {
    await assertWalled("services/gateway/src/jobs/planted.ts", {
      walled: [["keyRoutes", "../keys/routes"]],
      open: [
        ["admit", "../access/admission"],
        ["errors", "../errors"],
        ["submitJob", "./submit"],
      ],
    });
  });
});
