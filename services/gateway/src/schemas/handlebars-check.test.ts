import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AppError } from "@pressroom/platform";
import { MAX_HTML_BYTES } from "../limits";
import { handlebarsProblem } from "./handlebars-check";
import { CustomerSchemas, HANDLEBARS_BUDGET_MS } from "./schemas";

/**
 * Raw HTML's Handlebars, checked before admission (issue 44 item 6): a source that would fail the render is named with
 * its line and column; the check runs on the schema threads within its budget, never on the caller's event loop.
 */

/**
 * Raw HTML of the largest size, all mustaches: valid, so every one is parsed and compiled, 3 to 4 s on the machine of
 * bench/RESULTS.md, past the budget by three times. (A source with an unknown helper first is refused once parsed,
 * about 0.8 s there: within the budget, so it cannot stand for a source past it.)
 */
const crafted = "{{a}}".repeat(Math.floor(MAX_HTML_BYTES / "{{a}}".length));

describe("raw HTML's Handlebars check", () => {
  it("names a syntax error, an unknown helper and a partial with line and column", () => {
    assert.match(handlebarsProblem("<p>\n  {{upper name}}</p>")!, /^does not compile at line 2, column 3: unknown helper upper$/);
    assert.match(handlebarsProblem("<p>\n<b>{{name}</b>")!, /^does not compile at line 2, column \d+: Expecting /);
    assert.equal(
      handlebarsProblem("<p>{{#if a}}\n  x{{> footer}}{{/if}}</p>"),
      "does not compile at line 2, column 4: partials ({{> name}}) are not supported",
    );
    assert.match(handlebarsProblem("{{#each items}}{{/if}}")!, /^does not compile at line 1, column 4: each doesn't match if$/);
  });

  it("passes what render renders: the four helpers, Handlebars' own block helpers, lookups, sections and escapes", () => {
    const source =
      "<p>{{money total 'EUR'}} {{date when}} {{add a 1}} {{multiply a 2}}</p>" +
      "{{#each items}}<li>{{@index}} {{this.name}} {{lookup ../names @index}}</li>{{else}}none{{/each}}" +
      "{{#if a}}{{#with b}}{{c}}{{/with}}{{else}}{{#unless d}}e{{/unless}}{{/if}}{{#section}}{{x}}{{/section}}{{{raw}}} \\{{literal}}";
    assert.equal(handlebarsProblem(source), undefined);
  });

  describe("on the schema threads", () => {
    const schemas = new CustomerSchemas({ threads: 1 });
    // Its thread is up (a task that does not count a wait): the budget of a check counts the wait for a thread.
    before(() => schemas.kept());
    after(() => schemas.close());

    it("answers the first source that does not compile as 422 PAYLOAD_INVALID naming its field", async () => {
      const { problem, unchecked } = await schemas.handlebars([
        { field: "documents[0].html", html: "<p>{{name}}</p>" },
        { field: "documents[1].html", html: "<p>\n{{#each x}}{{upper this}}{{/each}}" },
      ]);
      assert.equal(unchecked, undefined);
      assert.ok(problem instanceof AppError);
      assert.equal(problem.code, "PAYLOAD_INVALID");
      assert.equal(problem.message, "documents[1].html: does not compile at line 2, column 12: unknown helper upper");
      assert.match(problem.hint, /money, date, add and multiply/);
      assert.deepEqual(await schemas.handlebars([{ field: "html", html: "<p>{{money total}}</p>" }]), {});
    });

    it("a crafted source past the budget is left unchecked, and the caller's event loop runs meanwhile", async () => {
      const order: string[] = [];
      const check = schemas.handlebars([{ field: "html", html: crafted }]).then((verdict) => {
        order.push("check");
        return verdict;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      order.push("timer");
      const verdict = await check;
      assert.deepEqual(order, ["timer", "check"], "a timer of the caller fired while the check ran");
      assert.equal(verdict.problem, undefined);
      assert.match(verdict.unchecked ?? "", /^timeout: /, `${crafted.length} characters are not checked within ${HANDLEBARS_BUDGET_MS} ms`);
      await schemas.kept();
      const next = await schemas.handlebars([{ field: "html", html: "{{#if}}" }]);
      assert.match(next.problem?.message ?? "", /^html: does not compile/, "the thread that ran past the budget was replaced");
    });

    it("without a thread within the budget (one busy with a crafted source), a check is left unchecked rather than waiting", async () => {
      const busy = schemas.handlebars([{ field: "html", html: crafted }]);
      const waiting = await schemas.handlebars([{ field: "html", html: "{{upper x}}" }]);
      assert.match(waiting.unchecked ?? "", /^timeout: /);
      await busy;
      await schemas.kept();
    });
  });
});
