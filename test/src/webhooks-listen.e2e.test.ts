import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Pressroom } from "@pressroom/client";
import { REPO_ROOT, ensureListenerCertificate, freePort, listenerSettings } from "@pressroom/stack";
import { startHarness, type Harness } from "./test-support/harness";
import { eventually } from "./test-support/webhook-receiver";

/**
 * `npm run webhooks:listen` against a stack whose webhook service has the
 * settings up.sh gives it (listenerSettings): a real callback reaches the
 * receiver over TLS, which prints it and says its signatures verify; a forged
 * one is printed as not verified and answered 401.
 */
describe("npm run webhooks:listen", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-listen-"));
  let harness: Harness;
  let listener: ChildProcess;
  let output = "";
  let port: number;
  let apiKey: string;

  before(async () => {
    port = await freePort();
    const files = ensureListenerCertificate(dir);
    harness = await startHarness({ serviceEnv: { webhook: listenerSettings(files, port) } });
    apiKey = (await harness.admin.createKey("business")).apiKey;
    listener = spawn("npm", ["run", "--silent", "webhooks:listen"], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PRESSROOM_BASE_URL: harness.stack.baseUrl,
        PRESSROOM_API_KEY: apiKey,
        PRESSROOM_WEBHOOKS_LISTEN_PORT: String(port),
        PRESSROOM_WEBHOOKS_LISTEN_DIR: dir,
      },
    });
    listener.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    listener.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    await eventually("the listener is up", async () => (output.includes("listening on") ? true : undefined), 30_000);
  });

  after(async () => {
    if (listener?.pid !== undefined && listener.exitCode === null) process.kill(-listener.pid, "SIGTERM");
    await harness?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("says where it listens and which webhook_url reaches it, without printing the key", () => {
    assert.match(output, new RegExp(`listening on https://127\\.0\\.0\\.1:${port}`));
    assert.match(output, /"webhook_url": "https:\/\/127\.0\.0\.1\/webhooks"/);
    assert.ok(!output.includes(apiKey), "the full API key is never printed");
  });

  it("prints a real delivery, its Standard Webhooks headers and body, and that both signatures verify", async () => {
    const client = new Pressroom({ apiKey, baseUrl: harness.stack.baseUrl });
    const queued = await client.render({ html: "<p>{{n}}</p>", data: { n: 1 }, webhook_url: "https://127.0.0.1/webhooks" });
    const shown = await eventually(
      "the delivery is printed",
      async () => (output.includes(`"job_id": "${queued.id}"`) && /-> 204/.test(output) ? output : undefined),
      60_000,
    );
    const block = shown.slice(shown.indexOf("--> POST /webhooks"));
    assert.match(block, /webhook-id: \S+/);
    assert.match(block, /webhook-signature: v1,/);
    assert.match(block, /x-service-signature: t=\d+,v1=/);
    assert.match(block, /"type": "job\.succeeded"/);
    assert.match(block, /signature: verified \(X-Service-Signature ok, Standard Webhooks ok\) -> 204/);
    const recorded = await eventually(
      "the webhook service records the receiver's answer",
      async () => (await client.webhookDeliveries({ job_id: queued.id })).data.find((d) => d.response_status !== null),
      10_000,
    );
    assert.equal(recorded.response_status, 204);
  });

  it("prints a forged delivery as not verified and answers it 401", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path: "/forged",
          method: "POST",
          ca: readFileSync(path.join(dir, "cert.pem")),
          headers: { "X-Service-Signature": `t=${Math.floor(Date.now() / 1000)},v1=${"0".repeat(64)}` },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end('{"id":"evt_forged"}');
    });
    assert.equal(status, 401);
    await eventually(
      "the forged delivery is printed",
      async () => (/--> POST \/forged[\s\S]*signature: NOT verified[^\n]*-> 401/.test(output) ? true : undefined),
      10_000,
    );
  });
});
