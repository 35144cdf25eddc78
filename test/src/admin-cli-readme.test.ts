import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { REPO_ROOT } from "@pressroom/stack";

/** The operator CLI's commands, as its help lists them, are each shown in the README's "Operator CLI" section. */
describe("the operator CLI in the README", () => {
  it("shows every command the CLI's help lists, and no other", () => {
    const help = execFileSync(process.execPath, [path.join(REPO_ROOT, "packages", "admin", "dist", "cli.js"), "--help"], { encoding: "utf8" });
    const listed = new Set([...help.matchAll(/^ {2}pressroom-admin (\S+ \S+)/gm)].map((m) => m[1]!));
    assert.ok(listed.size >= 6, help);
    const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Operator CLI"));
    const shown = new Set([...section.matchAll(/^node packages\/admin\/dist\/cli\.js (\S+ \S+)/gm)].map((m) => m[1]!));
    assert.deepEqual([...shown].sort(), [...listed].sort());
  });
});
