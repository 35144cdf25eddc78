import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isScriptFree } from "../engine";
import { loadBuiltinTemplates } from "./builtin-loader";
import { compileTemplate } from "./handlebars";

describe("built-in templates", () => {
  it("are script-free as the engine classifies them, filled with their sample data", () => {
    const builtins = loadBuiltinTemplates();
    assert.ok(builtins.length >= 10, "the built-in templates were found");
    for (const template of builtins) {
      assert.equal(isScriptFree(compileTemplate(template.body)(template.sampleData)), true, template.id);
    }
  });
});
