import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { webhookUrlProblem } from "./webhook-url";

describe("webhookUrlProblem", () => {
  it("accepts https on the default port", () => {
    assert.equal(webhookUrlProblem("https://example.com/hooks?a=1"), undefined);
    assert.equal(webhookUrlProblem("https://example.com:443/hooks"), undefined);
    assert.equal(webhookUrlProblem(`https://example.com/${"a".repeat(2048 - 20)}`), undefined);
    const exactly2048 = `https://example.com/${"a".repeat(2048 - "https://example.com/".length)}`;
    assert.equal(exactly2048.length, 2048);
    assert.equal(webhookUrlProblem(exactly2048), undefined);
    assert.match(webhookUrlProblem(`${exactly2048}a`) ?? "", /at most 2048 characters/);
  });

  it("rejects everything else, naming the field", () => {
    for (const bad of [
      "http://example.com/h",
      "https://example.com:8443/h",
      "https://user:pw@example.com/h",
      "https://user@example.com/h",
      "not a url",
      "/relative",
      42,
      `https://example.com/${"a".repeat(2048)}`,
      "https://exa\tmple.com/h",
      "https://example.com/h\n",
      " https://example.com/h",
      "ftp://example.com/h",
      "https://",
    ]) {
      assert.match(webhookUrlProblem(bad) ?? "", /^webhook_url: /, String(bad));
    }
  });
});
