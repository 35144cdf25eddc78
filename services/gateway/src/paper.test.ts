import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "@pressroom/platform";
import { validateJobRequest } from "./jobs/request";
import { validateTemplate } from "./templates/request";

const template = (page: Record<string, unknown>) => ({ id: "letter", name: "Letter", output: "pdf", html: "<p>x</p>", page });
const margin = (side: string) => ({ top: side, right: side, bottom: side, left: side });

describe("a template's page and a render's options: one paper definition", () => {
  it("take the same paper formats and CSS lengths, and refuse the same with the same words", () => {
    for (const length of ["0", "12mm", "1.5cm", ".5in", "20px", "36pt", "3pc"]) {
      assert.ok(!(validateTemplate(template({ format: "Tabloid", margin: margin(length) }), "free") instanceof AppError), length);
      const render = validateJobRequest("render", { html: "x", data: {}, options: { format: "Tabloid", margin: margin(length) } });
      assert.ok(!(render instanceof AppError), length);
    }
    for (const length of ["1em", "12", "-1mm", "1 mm"]) {
      const stored = validateTemplate(template({ margin: margin(length) }), "free");
      const render = validateJobRequest("render", { html: "x", data: {}, options: { margin: margin(length) } });
      assert.ok(stored instanceof AppError && render instanceof AppError, length);
      assert.equal(stored.message.replace(/^page\./, ""), render.message.replace(/^options\./, ""));
    }
    const format = validateTemplate(template({ format: "A7" }), "free");
    assert.ok(format instanceof AppError);
    assert.match(
      format.message,
      /^page\.format: must be one of A0, A1, A2, A3, A4, A5, A6, B4, B5, Letter, Legal, Tabloid, Ledger, Executive \(in any case\)$/,
    );
    const stored = validateTemplate(template({ format: "ledger" }), "free");
    assert.ok(!(stored instanceof AppError));
    assert.equal(stored.page?.format, "Ledger", "kept as the formats spell it");
  });
});
