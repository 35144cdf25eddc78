import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { openDestination, readJobEvents } from "@pressroom/domain";
import { ensureSealingKey, readSealingPrivateKey, streams, subjects } from "@pressroom/platform";
import { waitFor } from "@pressroom/stack";
import { connect, type JetStreamManager, type NatsConnection } from "nats";
import pg from "pg";
import { BUCKET, presignedPut, s3Endpoint } from "./test-support/destinations";
import { startHarness, type Harness } from "./test-support/harness";
import { WebhookReceiver } from "./test-support/webhook-receiver";

const USER_PASSWORD = "sealed-user-pw-5b0e";
const OWNER_PASSWORD = "sealed-owner-pw-c27d";
const HEADER_SECRET = "sealed-header-8e41";
const PERMISSIONS = { print: true, copy: false, modify: false, annotate: false };
const encrypt = { user_password: USER_PASSWORD, owner_password: OWNER_PASSWORD, permissions: PERMISSIONS };
/** A document whose render keeps one of the key's slots busy for a while, so the batch's next items wait in metering. */
const SLOW_HTML = "<h1>Slow</h1><script>const end = Date.now() + 3000; while (Date.now() < end) {}</script>";

/** qpdf's account of a PDF's encryption, opened with `password`. */
function encryption(pdf: Uint8Array, password: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "sealed-secrets-"));
  try {
    writeFileSync(path.join(dir, "doc.pdf"), pdf);
    const run = spawnSync("qpdf", [`--password=${password}`, "--show-encryption", path.join(dir, "doc.pdf")], { encoding: "utf8" });
    return run.stdout + run.stderr;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A caller's secrets travel and rest sealed (issue 39 item 8, issue 42), render's to render's key
 * and a destination's url and headers to the webhook service's: the raw RENDER commands (the
 * gateway's, and a batch item's as metering publishes it), a waiting batch item's stored command
 * (metering.batch_items.command), the DESTINATIONS message render publishes and every event of the
 * JOBS stream hold no encryption password, nor a destination's query string or header value, in
 * clear; the services that use them still do: the PDF opens with its password, and the destination
 * gets its PUT with its header.
 */
describe("a job's secrets, sealed to render's key and its destination to the webhook's, end to end", () => {
  const receiver = new WebhookReceiver();
  let h: Harness;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  /** Every RENDER command published, as its raw bytes (latin1), by job id. */
  const commands: { jobId: string; raw: string }[] = [];
  /** Every DESTINATIONS message published, as its raw bytes (the work queue deletes it once the job has ended). */
  const deliveries: Uint8Array[] = [];

  before(async () => {
    await receiver.start();
    h = await startHarness({ serviceEnv: { webhook: receiver.env() } });
    nc = await connect({ servers: h.stack.natsUrl });
    jsm = await nc.jetstreamManager();
    nc.subscribe(subjects.renderRequested, {
      callback: (_err, msg) => commands.push({ jobId: msg.headers?.get("Nats-Msg-Id") ?? "", raw: Buffer.from(msg.data).toString("latin1") }),
    });
    nc.subscribe(subjects.destinationDelivery, { callback: (_err, msg) => deliveries.push(msg.data) });
    await nc.flush();
  });

  after(async () => {
    await nc?.close();
    await h?.stop();
    await receiver.stop();
  });

  const assertSealed = (where: string, raw: string, secrets: string[]) => {
    for (const secret of secrets) assert.ok(!raw.includes(secret), `${where} holds ${secret} in clear`);
    assert.match(raw, /sealed:v1:/, `${where} carries the sealed secrets`);
  };

  it("a render with a password and a destination: its RENDER command, DESTINATIONS message and events hold neither in clear; the PDF opens with the password, the PUT has its header", async () => {
    const { apiKey } = await h.admin.createKey("pro");
    const url = await presignedPut("sealed/statement.pdf");
    const signature = new URL(url).searchParams.get("X-Amz-Signature")!;
    const query = new URL(url).search.slice(1);
    receiver.on(`/${BUCKET}/sealed/statement.pdf`, s3Endpoint());
    const response = await h.api.post(
      "/v1/render",
      { html: "<h1>Statement</h1>", data: {}, options: { encrypt }, destination: { url, headers: { "x-amz-meta-run": HEADER_SECRET } } },
      { key: apiKey },
    );
    assert.equal(response.status, 200, response.text);
    const jobId = response.json.id as string;

    const [put] = receiver.requestsOn(`/${BUCKET}/sealed/statement.pdf`);
    assert.equal(put?.status, 200, "the destination's SigV4 check held: render opened its url");
    assert.equal(put.headers["x-amz-meta-run"], HEADER_SECRET);
    assert.match(encryption(put.body, USER_PASSWORD), /R = 6/, "the PDF is encrypted with the password sealed in its command");
    assert.match(encryption(put.body, "not-the-password"), /Incorrect password supplied/);

    const published = commands.filter((command) => command.jobId === jobId);
    assert.equal(published.length, 1);
    assertSealed("the RENDER command", published[0]!.raw, [USER_PASSWORD, OWNER_PASSWORD, HEADER_SECRET, signature, "X-Amz-Signature", query]);

    // The DESTINATIONS message render published: the destination sealed as the gateway sealed it, which only the webhook's key opens, for this job only.
    const handedOff = deliveries.map((data) => jobEventsV1.DestinationDelivery.decode(data)).filter((delivery) => delivery.jobId === jobId);
    assert.equal(handedOff.length, 1, "render handed the destination off once");
    const raw = Buffer.from(deliveries[deliveries.findIndex((data) => jobEventsV1.DestinationDelivery.decode(data).jobId === jobId)]!).toString("latin1");
    assertSealed("the DESTINATIONS message", raw, [HEADER_SECRET, signature, "X-Amz-Signature", query, USER_PASSWORD, OWNER_PASSWORD]);
    const sealed = handedOff[0]!.sealedDestination;
    const webhookKey = readSealingPrivateKey(h.stack.destinationSealingKey.key);
    assert.deepEqual(openDestination(webhookKey, jobId, sealed), { url, headers: { "x-amz-meta-run": HEADER_SECRET } });
    assert.throws(() => openDestination(readSealingPrivateKey(h.stack.sealingKey.key), jobId, sealed), "render's key does not open the destination");
    assert.throws(() => openDestination(webhookKey, "job_0000000000aaaaaaaaaaaaaaaa", sealed), "nor does it open as another job's");

    // Every event of the job in the JOBS stream, as stored: the host only, neither sealed value.
    const stored = await readJobEvents(jsm, jobId);
    assert.ok(stored.some((event) => event.event.type === "job.destination_delivered"));
    for (const { seq } of stored) {
      const message = await jsm.streams.getMessage(streams.JOBS, { seq });
      const event = Buffer.from(message.data).toString("latin1");
      for (const secret of [HEADER_SECRET, signature, "X-Amz-Signature", query, USER_PASSWORD, OWNER_PASSWORD, "sealed:v1:"]) {
        assert.ok(!event.includes(secret), `the JOBS stream's event ${seq} holds ${secret}`);
      }
    }
  });

  it("a batch item with a password: its stored command and the command metering publishes hold it sealed; the output opens with it", async () => {
    // Starter: two renders at once, both slow, while the next items wait.
    const { apiKey } = await h.admin.createKey("starter");
    const items = [0, 1, 2, 3].map((n) => (n < 2 ? { html: SLOW_HTML, data: {} } : { html: "<h1>Item {{n}}</h1>", data: { n }, options: { encrypt } }));
    const response = await h.api.post("/v1/batches", { items }, { key: apiKey });
    assert.equal(response.status, 202, response.text);
    const batchId = response.json.id as string;

    const db = new pg.Client({ connectionString: h.stack.databaseUrls.metering });
    await db.connect();
    try {
      // The key's two slots render the slow items: the others wait here, with their commands.
      const waiting = await db.query<{ job_id: string; command: Buffer }>(
        "select job_id, command from metering.batch_items where batch_id = $1 and command is not null and idx > 1",
        [batchId],
      );
      assert.ok(waiting.rows.length > 0, "an item waits in metering with its command");
      for (const row of waiting.rows) assertSealed(`batch_items.command of ${row.job_id}`, row.command.toString("latin1"), [USER_PASSWORD, OWNER_PASSWORD]);
    } finally {
      await db.end();
    }

    await waitFor(
      "the batch's end",
      async () => {
        const batch = (await h.api.get(`/v1/batches/${batchId}`, { key: apiKey })).json as { counts: { queued: number; running: number } };
        return batch.counts.queued + batch.counts.running === 0;
      },
      60_000,
      500,
    );
    const listed = (await h.api.get(`/v1/batches/${batchId}/items`, { key: apiKey })).json as {
      data: { index: number; job_id: string; status: string; url: string }[];
    };
    const sealed = listed.data.filter((item) => item.index > 1);
    assert.deepEqual(
      sealed.map((item) => item.status),
      ["succeeded", "succeeded"],
    );
    for (const item of sealed) {
      const published = commands.filter((command) => command.jobId === item.job_id);
      assert.ok(published.length > 0, "metering published the item's command");
      for (const command of published) assertSealed(`the RENDER command of ${item.job_id}`, command.raw, [USER_PASSWORD, OWNER_PASSWORD]);
    }
    const download = await h.api.download(sealed[0]!.url);
    assert.equal(download.status, 200);
    assert.match(encryption(Buffer.from(download.body), USER_PASSWORD), /R = 6/);
  });
});

/**
 * A destination sealed to a key the webhook service does not hold (the gateway's
 * DESTINATION_SEALING_PUBLIC_KEY out of step with its DESTINATION_SEALING_KEY): no PUT is made,
 * the destination is given up at once and the job fails DESTINATION_FAILED, the webhook service
 * logging why without the sealed value or anything of the destination but its host.
 */
describe("a destination sealed to another key than the webhook service's", () => {
  const receiver = new WebhookReceiver();
  const dir = mkdtempSync(path.join(tmpdir(), "sealed-destination-"));
  let h: Harness;

  before(async () => {
    await receiver.start();
    const stray = ensureSealingKey(dir, "stray");
    h = await startHarness({ serviceEnv: { webhook: receiver.env(), gateway: { DESTINATION_SEALING_PUBLIC_KEY: stray.publicKey } } });
  });

  after(async () => {
    await h?.stop();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is given up without a PUT: the job fails DESTINATION_FAILED, the reason logged without the destination", async () => {
    const { apiKey } = await h.admin.createKey("pro");
    const url = await presignedPut("sealed/stray.pdf");
    const receiverPath = `/${BUCKET}/sealed/stray.pdf`;
    receiver.on(receiverPath, s3Endpoint());
    const response = await h.api.post(
      "/v1/render",
      { html: "<h1>Stray</h1>", data: {}, async: true, destination: { url, headers: { "x-amz-meta-run": HEADER_SECRET } } },
      { key: apiKey },
    );
    assert.equal(response.status, 202, response.text);
    const jobId = response.json.id as string;
    let view: { status: string; error: { code: string; message: string }; destination: { state: string; attempts: number } } | undefined;
    await waitFor(
      "the job's end",
      async () => {
        view = (await h.api.get(`/v1/jobs/${jobId}`, { key: apiKey })).json as typeof view;
        return view?.status === "failed";
      },
      60_000,
      500,
    );
    assert.equal(view!.error.code, "DESTINATION_FAILED");
    assert.match(view!.error.message, /its sealed url and headers could not be opened/);
    assert.deepEqual([view!.destination.state, view!.destination.attempts], ["exhausted", 0]);
    assert.deepEqual(receiver.requestsOn(receiverPath), [], "no PUT was made");
    const output = h.stack.output();
    assert.match(output, /do not open with this service's key \(DESTINATION_SEALING_KEY\)/);
    for (const secret of [HEADER_SECRET, new URL(url).search.slice(1), "sealed:v1:"]) assert.ok(!output.includes(secret), `the logs hold ${secret}`);
  });
});
