import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { REPO_ROOT, freePort } from "@pressroom/stack";
import { startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver } from "./test-support/webhook-receiver";

/**
 * The Python client (packages/client-python): its unittest suites run as
 * subprocesses, so their results count in this runner's summary. The unit
 * tests need nothing; the end-to-end tests get this file's stack (base URL,
 * keys, and the port and certificate for their own HTTPS webhook receiver)
 * in the environment.
 */

const PACKAGE = path.join(REPO_ROOT, "packages", "client-python");
const PYTHON = process.env.PYTHON ?? "python3";

interface Run {
  code: number | null;
  output: string;
}

function python(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, {
      cwd: PACKAGE,
      env: { ...process.env, PYTHONPATH: path.join(PACKAGE, "src"), PYTHONDONTWRITEBYTECODE: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("error", (err: NodeJS.ErrnoException) => {
      reject(err.code === "ENOENT" ? new Error(`${PYTHON} not found: install Python 3.9 or later (apt-get install python3), or set PYTHON`) : err);
    });
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** Asserts that unittest ran at least `minimumTests` tests and all passed; lists them in the report. */
function assertPassed(t: TestContext, run: Run, minimumTests: number): void {
  assert.equal(run.code, 0, `the Python tests failed:\n${run.output}`);
  const ran = Number(/^Ran (\d+) tests? in /m.exec(run.output)?.[1] ?? 0);
  assert.ok(ran >= minimumTests, `expected at least ${minimumTests} Python tests, ran ${ran}:\n${run.output}`);
  assert.match(run.output, /^OK$/m, run.output);
  for (const line of run.output.split("\n").filter((l) => / \.\.\. ok$/.test(l))) t.diagnostic(line);
}

describe("the Python client", () => {
  it("passes its unit tests (verifier vectors, endpoints, errors, redaction, retries)", async (t) => {
    assertPassed(t, await python(["-m", "unittest", "discover", "-v", "-s", "tests/unit"]), 30);
  });

  describe("against the running services", () => {
    const receiver = new WebhookReceiver();
    let harness: Harness;
    const keys: string[] = [];

    before(async () => {
      receiver.port = await freePort();
      harness = await startHarness({ serviceEnv: { webhook: receiver.env() } });
      const business = await harness.admin.createKey("business");
      const demo = await harness.admin.createKey("demo");
      const exhausted = await harness.admin.createKey("free");
      await harness.admin.setUsed(exhausted.keyId, "free", 100);
      keys.push(business.apiKey, demo.apiKey, exhausted.apiKey);
    });

    after(async () => {
      await harness?.stop();
      await receiver.stop();
    });

    it("passes its end-to-end tests: render, download, image, webhook, 401/422/429, signup, checkout", async (t) => {
      const [business, demo, exhausted] = keys;
      const run = await python(["-m", "unittest", "discover", "-v", "-s", "tests/e2e"], {
        PRESSROOM_E2E_BASE_URL: harness.stack.baseUrl,
        PRESSROOM_E2E_API_KEY: business,
        PRESSROOM_E2E_DEMO_KEY: demo,
        PRESSROOM_E2E_QUOTA_KEY: exhausted,
        PRESSROOM_E2E_WEBHOOK_PORT: String(receiver.port),
        PRESSROOM_E2E_WEBHOOK_CERT: receiver.caFile,
        PRESSROOM_E2E_WEBHOOK_KEY: receiver.keyFile,
      });
      assertPassed(t, run, 10);
    });

    it("no key, webhook secret or URL signature reaches a log line", () => {
      const logs = harness.stack.output();
      assert.ok(logs.length > 0, "the services logged something");
      assert.deepEqual(
        keys.filter((key) => logs.includes(key)),
        [],
        "keys found in the services' output",
      );
      assert.ok(!/\bpr_live_[0-9A-Za-z]{20,}/.test(logs), "no live key of any kind in the logs");
      assert.ok(!/\bwhsec_[A-Za-z0-9+/_=-]{20,}/.test(logs), "no webhook secret of any kind in the logs");
      assert.ok(!/[?&]sig=[0-9a-f]{64}/.test(logs), "no URL signature of any kind in the logs");
    });
  });
});
