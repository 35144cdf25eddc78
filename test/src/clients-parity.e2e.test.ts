import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Pressroom, PressroomSignatureError, constructEvent } from "@pressroom/client";
import { REPO_ROOT, freePort } from "@pressroom/stack";
import { startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, type ReceivedCallback } from "./test-support/webhook-receiver";

/**
 * One scenario, walked by the JavaScript client and by the Python client
 * against the same stack: a webhook render (retries on, so an Idempotency-Key
 * of the client's own), waiting for the job, its download, a catalog
 * template's preview, the webhook secret's rotation, the usage and the
 * account's lists (the same answers' shapes). Both see
 * the same answers, and each verifies both clients' real deliveries with
 * constructEvent / construct_event, from the seed's header or the Standard
 * Webhooks headers alone.
 */

const PYTHON = process.env.PYTHON ?? "python3";
const SCRIPT = path.join(REPO_ROOT, "test", "src", "test-support", "clients-scenario.py");

interface Outcome {
  compared: Record<string, unknown>;
  job_id: string;
  secret: string;
}

function python(args: string[], env: NodeJS.ProcessEnv, input = ""): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [SCRIPT, ...args], {
      env: { ...process.env, PYTHONPATH: path.join(REPO_ROOT, "packages", "client-python", "src"), PYTHONDONTWRITEBYTECODE: "1", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`python exited ${code}:\n${stderr}`))));
    child.stdin.end(input);
  });
}

async function javascriptScenario(apiKey: string, hookUrl: string): Promise<Outcome> {
  const client = new Pressroom({ apiKey, maxRetries: 2 });
  const secretBefore = (await client.webhookSecret()).secret;
  const queued = await client.render({ html: "<h1>{{title}}</h1>", data: { title: "Parity" }, webhook_url: hookUrl });
  const job = await client.waitForJob(queued.id, { timeoutMs: 90_000, intervalMs: 200 });
  const document = await client.download(job.url ?? "");
  const preview = await client.templatePreview("invoice");
  const rotated = await client.rotateWebhookSecret();
  const usage = await client.usage();
  const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1");
  return {
    compared: {
      queued: Object.keys(queued).sort(),
      queued_status: queued.status,
      job: Object.keys(job).sort(),
      job_status: job.status,
      document: latin1(document.subarray(0, 5)),
      preview: latin1(preview.subarray(1, 4)),
      rotated: Object.keys(rotated).sort(),
      secret_replaced: rotated.secret !== secretBefore && (await client.webhookSecret()).secret === rotated.secret,
      usage: Object.keys(usage).sort(),
      answers: [
        Object.keys(await client.templates()).sort(),
        Object.keys(await client.webhookSecret()).sort(),
        Object.keys(await client.dailyUsage()).sort(),
        Object.keys(await client.jobs({ limit: 1 })).sort(),
        Object.keys(await client.webhookDeliveries({ limit: 1 })).sort(),
      ],
    },
    job_id: queued.id,
    secret: secretBefore,
  };
}

describe("both clients walk one scenario against the stack", () => {
  const receiver = new WebhookReceiver();
  let harness: Harness;
  let javascript: Outcome;
  let python3: Outcome;
  const deliveries: ReceivedCallback[] = [];

  before(async () => {
    receiver.port = await freePort();
    await receiver.start(receiver.port);
    harness = await startHarness({ serviceEnv: { webhook: receiver.env() } });
    const [jsKey, pyKey] = [await harness.admin.createKey("business"), await harness.admin.createKey("business")];
    const saved = process.env.PRESSROOM_BASE_URL;
    process.env.PRESSROOM_BASE_URL = harness.stack.baseUrl;
    try {
      javascript = await javascriptScenario(jsKey.apiKey, receiver.url("/js"));
    } finally {
      if (saved === undefined) delete process.env.PRESSROOM_BASE_URL;
      else process.env.PRESSROOM_BASE_URL = saved;
    }
    python3 = (await python(["scenario"], {
      PRESSROOM_BASE_URL: harness.stack.baseUrl,
      PRESSROOM_API_KEY: pyKey.apiKey,
      PRESSROOM_HOOK_URL: receiver.url("/py"),
    })) as Outcome;
    deliveries.push((await receiver.waitFor("/js", 1, 60_000))[0]!, (await receiver.waitFor("/py", 1, 60_000))[0]!);
  });

  after(async () => {
    await harness?.stop();
    await receiver.stop();
  });

  it("both see the same answers: a finished PDF, a PNG preview, a replaced secret, the same fields", () => {
    assert.equal(javascript.compared.job_status, "succeeded");
    assert.equal(javascript.compared.document, "%PDF-");
    assert.equal(javascript.compared.preview, "PNG");
    assert.equal(javascript.compared.secret_replaced, true);
    assert.deepEqual(javascript.compared.rotated, ["previous_secret_expires_at", "secret"]);
    assert.deepEqual(python3.compared, javascript.compared);
  });

  it("each client verifies both clients' deliveries, from either signature scheme, and refuses a changed body", async () => {
    const owners = [javascript, python3];
    for (const [i, delivery] of deliveries.entries()) {
      const { secret, job_id } = owners[i]!;
      const standardOnly = Object.fromEntries(Object.entries(delivery.headers).filter(([name]) => name !== "x-service-signature"));
      assert.ok(standardOnly["webhook-signature"], "the delivery carries the Standard Webhooks headers");
      for (const headers of [delivery.headers, standardOnly]) {
        const event = constructEvent(delivery.rawBody, headers, secret);
        assert.equal(event.job_id, job_id);
        assert.equal(event.type, "job.succeeded");
        assert.deepEqual(await python(["verify"], {}, JSON.stringify({ body: delivery.rawBody, headers, secret })), { event });
      }
      const changed = delivery.rawBody.replace("succeeded", "failed");
      assert.throws(() => constructEvent(changed, delivery.headers, secret), PressroomSignatureError);
      assert.deepEqual(await python(["verify"], {}, JSON.stringify({ body: changed, headers: delivery.headers, secret })), { refused: "SIGNATURE_INVALID" });
    }
  });
});
