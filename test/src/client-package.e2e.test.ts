import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { signWebhookPayload } from "@pressroom/client";
import { REPO_ROOT, freePort } from "@pressroom/stack";
import { startHarness, type Harness } from "./test-support/harness";

/**
 * The JavaScript client as someone outside this repository gets it: packed
 * with `npm pack`, installed from the tarball into a new project in a temporary
 * directory (no workspace, no node_modules of the repository above it), and the
 * code snippets of a template's gallery page, taken from the page's HTML,
 * saved under the name they say and run as they are against the stack; and
 * the README's webhook receiver, run as it is with the installed client.
 */

const run = promisify(execFile);
const PYTHON = process.env.PYTHON ?? "python3";

/** The text of each `<pre><code>` of the page's "Render it from code" section, HTML entities decoded. */
function snippetsOf(html: string): string[] {
  const section = html.slice(html.indexOf('class="snippets"'));
  const entities: Record<string, string> = { "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&amp;": "&" };
  return [...section.matchAll(/<pre><code>([\s\S]*?)<\/code><\/pre>/g)].map((m) => m[1]!.replace(/&(?:lt|gt|quot|#39|amp);/g, (e) => entities[e]!));
}

describe("the JavaScript client installed from its packed tarball, outside the monorepo", () => {
  const project = mkdtempSync(path.join(tmpdir(), "pressroom-client-user-"));
  const packs = mkdtempSync(path.join(tmpdir(), "pressroom-client-pack-"));
  let harness: Harness;
  let snippets: string[];

  before(async () => {
    harness = await startHarness();
    const page = await fetch(`${harness.stack.baseUrl}/templates/invoice`);
    assert.equal(page.status, 200);
    snippets = snippetsOf(await page.text());
    await run("npm", ["pack", "--pack-destination", packs], { cwd: path.join(REPO_ROOT, "packages", "client") });
    const tarball = readdirSync(packs).find((name) => name.endsWith(".tgz"));
    assert.ok(tarball, "npm pack wrote a tarball");
    writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "pressroom-user", version: "1.0.0", private: true }));
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", path.join(packs, tarball)], { cwd: project });
  });

  after(async () => {
    await harness?.stop();
    rmSync(project, { recursive: true, force: true });
    rmSync(packs, { recursive: true, force: true });
  });

  it("is publishable: not private, its files are the built code, its types and its README", () => {
    const installed = path.join(project, "node_modules", "@pressroom", "client");
    const manifest = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8")) as Record<string, unknown>;
    assert.equal(manifest.private, undefined);
    const files = readdirSync(path.join(installed, "dist")).sort();
    assert.ok(files.includes("index.js") && files.includes("index.d.ts") && files.includes("webhooks.js"), files.join(" "));
    assert.deepEqual(
      files.filter((name) => name.includes(".test.") || name.endsWith(".map") || name === "test-support"),
      [],
    );
    assert.ok(readdirSync(installed).includes("README.md"));
  });

  it("loads with require and with import, its webhooks entry point too", async () => {
    const script = [
      'const { Pressroom, constructEvent } = require("@pressroom/client");',
      'const webhooks = require("@pressroom/client/webhooks");',
      'import("@pressroom/client").then((esm) => console.log(typeof Pressroom, typeof constructEvent, typeof webhooks.verifyStandardWebhook, typeof esm.Pressroom, typeof esm.signWebhookPayload));',
    ].join("\n");
    const { stdout } = await run(process.execPath, ["-e", script], { cwd: project });
    assert.equal(stdout.trim(), "function function function function function");
  });

  it("runs the gallery's JavaScript snippet as shown, saved under the name it gives, and writes the PDF", async () => {
    const javascript = snippets.find((code) => code.includes("@pressroom/client"));
    assert.ok(javascript, "the page shows a JavaScript snippet");
    const name = /^\/\/ (\S+\.mjs), an ES module/.exec(javascript)?.[1];
    assert.equal(name, "invoice.mjs", "the snippet says the file it is and its module type");
    writeFileSync(path.join(project, name), javascript);
    await run(process.execPath, [name], { cwd: project, env: { ...process.env, PRESSROOM_BASE_URL: "" } });
    assert.equal(readFileSync(path.join(project, "invoice.pdf")).subarray(0, 5).toString("latin1"), "%PDF-");
  });

  it("runs the gallery's Python snippet as shown, with the Python client on the path", async () => {
    const python = snippets.find((code) => code.includes("from pressroom import Pressroom"));
    assert.ok(python, "the page shows a Python snippet");
    writeFileSync(path.join(project, "invoice.py"), python);
    rmSync(path.join(project, "invoice.pdf"), { force: true });
    await run(PYTHON, ["invoice.py"], { cwd: project, env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, "packages", "client-python", "src") } });
    assert.equal(readFileSync(path.join(project, "invoice.pdf")).subarray(0, 5).toString("latin1"), "%PDF-");
  });

  it("runs the README's webhook receiver as shown: a signed delivery is answered 204, a forged one 401", async () => {
    const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    const receiver = /```js\n(\/\/ receiver\.mjs[\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(receiver, "the README shows receiver.mjs");
    writeFileSync(path.join(project, "receiver.mjs"), receiver);
    const secret = "whsec_dGVzdC1zZWNyZXQtZm9yLXRoZS1yZWFkbWU";
    const port = await freePort();
    const child = spawn(process.execPath, ["receiver.mjs"], {
      cwd: project,
      env: { ...process.env, PORT: String(port), PRESSROOM_WEBHOOK_SECRET: secret },
      stdio: "ignore",
    });
    try {
      const body = JSON.stringify({ id: "evt_1", type: "job.succeeded", job_id: "job_1", status: "succeeded" });
      const post = async (signature: string) => {
        // The receiver may still be starting: try for up to 10 s.
        for (let tries = 1; ; tries++) {
          try {
            return (await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body, headers: { "X-Service-Signature": signature } })).status;
          } catch (err) {
            if (tries === 100) throw err;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      };
      assert.equal(await post(signWebhookPayload(body, secret, Math.floor(Date.now() / 1000))), 204);
      assert.equal(await post(signWebhookPayload(body, "whsec_b3RoZXI", Math.floor(Date.now() / 1000))), 401);
    } finally {
      child.kill();
    }
  });
});
