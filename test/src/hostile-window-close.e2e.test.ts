import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { descendantsOf } from "@pressroom/stack";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver, eventually } from "./test-support/webhook-receiver";

interface JobView {
  id: string;
  status: string;
  error?: { code: string; message: string };
  events: { type: string }[];
}

/** A document that says it runs (a request to `beacon`) and then busy-waits `ms` (about 3 s): long enough to be killed under. */
const slowHtml = (beacon: string, ms = 3000) =>
  `<p>slow</p><script>fetch("${beacon}", { mode: "no-cors" }).catch(() => {}); const end = Date.now() + ${ms}; while (Date.now() < end) {}</script>`;

/** The Chromium browser process (not a renderer or helper) the render service runs now. */
function browserPidOf(h: Harness): number | undefined {
  const render = h.stack.services.processes.get("render")!.child.pid!;
  return descendantsOf(render).find((pid) => {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return /chromium/.test(args[0] ?? "") && !args.some((arg) => arg.startsWith("--type="));
    } catch {
      return false;
    }
  });
}

const starts = (job: JobView) => job.events.filter((event) => event.type === "job.started").length;

/**
 * Whose fault a lost page is, through the gateway with real Chromium. A
 * document that closes its window, crashes its renderer or navigates away
 * fails at once as its own (422 RENDER_FAILED, counted, one attempt); the
 * browser killed under a job is ours (retried), but a job in flight at two
 * of its deaths is a poison job (422 RENDER_FAILED, counted, not tried a
 * third time; issue 39).
 */
describe("hostile documents: a lost window is the document's, a killed browser is ours", () => {
  const receiver = new WebhookReceiver();
  let h: Harness;

  before(async () => {
    await receiver.start();
    h = await startHarness({
      serviceEnv: {
        // The slow documents tell the receiver when they run (loopback, its certificate trusted: tests only).
        render: {
          RENDER_DEADLINE_MS: "30000",
          RENDER_ALLOW_LOOPBACK: "true",
          RENDER_EXTRA_CA_FILE: receiver.caFile,
          RENDER_SUBRESOURCE_PORTS: `443,${receiver.port}`,
        },
        webhook: receiver.env(),
      },
    });
  });
  after(async () => {
    await h?.stop();
    await receiver.stop();
  });

  async function finished(id: string, key: string): Promise<JobView> {
    return eventually(
      `job ${id} ends`,
      async () => {
        const view = (await h.api.get(`/v1/jobs/${id}`, { key })).json as JobView;
        return view.status === "succeeded" || view.status === "failed" ? view : undefined;
      },
      120_000,
      100,
    );
  }

  async function rendersUsed(key: string): Promise<number> {
    const usage = await h.api.get("/v1/keys/usage", { key });
    assert.equal(usage.status, 200, usage.text);
    return usage.json.renders.used as number;
  }

  it("answers window.close() with 422 RENDER_FAILED at once and counts it (it used to be refunded after three attempts)", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const sync = await h.api.post("/v1/render", { html: "<p>work</p><script>window.close()</script>", data: {} }, { key: apiKey });
    assert.equal(sync.status, 422, sync.text);
    assert.deepEqual(Object.keys(sync.json).sort(), ["code", "error", "hint"]);
    assert.equal(sync.json.code, "RENDER_FAILED");
    assert.match(sync.json.error, /closed its own window/);
    assert.equal(await rendersUsed(apiKey), 1);
  });

  const hostile: [string, string, RegExp][] = [
    ["closes its window", "<p>work</p><script>window.close()</script>", /closed its own window/],
    [
      "closes its window from a timer",
      "<p>work</p><script>setTimeout(() => window.close(), 10); const t = Date.now(); while (Date.now() - t < 200) {}</script>",
      /closed its own window/,
    ],
    ["assigns location", `<p>work</p><script>location.href = "https://example.com/"</script>`, /navigate away/],
    [
      "submits a form",
      `<form action="https://example.com/steal" method="post"><input name="x" value="1"></form><script>document.forms[0].submit()</script>`,
      /navigate away/,
    ],
    ["refreshes to another URL", `<meta http-equiv="refresh" content="0; url=https://example.com/"><p>work</p>`, /navigate away/],
    ["runs its renderer out of memory", "<script>let a = []; for (;;) a.push(new Array(1e6).fill(1))</script>", /renderer crashed/],
  ];
  for (const [what, html, message] of hostile) {
    it(`fails a document that ${what} as RENDER_FAILED in one attempt, counted`, async () => {
      const { apiKey } = await h.admin.createKey("business");
      const accepted = await h.api.post("/v1/render", { html, data: {}, webhook_url: receiver.url("/hooks/hostile") }, { key: apiKey });
      assert.equal(accepted.status, 202, accepted.text);
      const job = await finished(accepted.json.id, apiKey);
      assert.equal(job.status, "failed");
      assert.equal(job.error?.code, "RENDER_FAILED");
      assert.match(job.error!.message, message);
      assert.equal(starts(job), 1, `one attempt: ${job.events.map((e) => e.type).join(", ")}`);
      assert.equal(await rendersUsed(apiKey), 1, "charged");
    });
  }

  it("retries a job whose browser was killed under it: it succeeds on the next attempt, charged once", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const accepted = await h.api.post(
      "/v1/render",
      { html: slowHtml(beacon("/running/retried")), data: {}, webhook_url: receiver.url("/hooks/hostile") },
      { key: apiKey },
    );
    assert.equal(accepted.status, 202, accepted.text);
    await killBrowserUnderAttempt("/running/retried", 1);
    const job = await finished(accepted.json.id, apiKey);
    assert.equal(job.status, "succeeded", JSON.stringify(job.error));
    assert.equal(starts(job), 2);
    assert.equal(await rendersUsed(apiKey), 1);
  });

  it("fails a poison job, in flight at two browser deaths, 422 RENDER_FAILED charged and never tried a third time; another key's job caught in the first death is tried again and served", async () => {
    const { apiKey: owner } = await h.admin.createKey("business");
    const { apiKey: other } = await h.admin.createKey("business");
    const post = (key: string, html: string) => h.api.post("/v1/render", { html, data: {}, webhook_url: receiver.url("/hooks/hostile") }, { key });
    // Another key's document, running (about 10 s) when the first death comes.
    const caught = await post(other, slowHtml(beacon("/running/caught"), 10_000));
    assert.equal(caught.status, 202, caught.text);
    await eventually("the other key's document runs", async () => (receiver.requestsOn("/running/caught").length >= 1 ? true : undefined), 60_000, 20);
    const poison = await post(owner, slowHtml(beacon("/running/poison")));
    assert.equal(poison.status, 202, poison.text);
    for (const attempt of [1, 2]) await killBrowserUnderAttempt("/running/poison", attempt);

    const job = await finished(poison.json.id, owner);
    assert.equal(job.status, "failed");
    assert.equal(job.error?.code, "RENDER_FAILED");
    assert.match(job.error!.message, /died \(2 times\).*a poison job/);
    assert.equal(starts(job), 2, `not tried a third time: ${job.events.map((e) => e.type).join(", ")}`);
    assert.equal(await rendersUsed(owner), 1, "its owner is charged");
    const served = await finished(caught.json.id, other);
    assert.equal(served.status, "succeeded", JSON.stringify(served.error));
    assert.equal(starts(served), 2, "caught in the first death, tried again once");
    assert.equal(receiver.requestsOn("/running/poison").length, 2, "the poison document ran twice, no more");
    assert.equal(await rendersUsed(other), 1);
  });

  const beacon = (pathname: string) => `https://127.0.0.1:${receiver.port}${pathname}`;

  /** Waits until the document of the job's `attempt`-th run calls `pathname`, and SIGKILLs the browser it runs on. */
  async function killBrowserUnderAttempt(pathname: string, attempt: number): Promise<void> {
    await eventually(`attempt ${attempt}'s document runs`, async () => (receiver.requestsOn(pathname).length >= attempt ? true : undefined), 60_000, 20);
    const pid = await eventually("the browser's pid", async () => browserPidOf(h), 10_000);
    process.kill(pid, "SIGKILL");
  }

  endOfSuiteChecks(() => h);
});
