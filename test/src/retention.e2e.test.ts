import assert from "node:assert/strict";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { streams } from "@pressroom/platform";
import { readJobEvents } from "@pressroom/domain";
import { runMigrations, waitFor } from "@pressroom/stack";
import { connect, type JetStreamManager, type NatsConnection } from "nats";
import pg from "pg";
import { endOfSuiteChecks, startHarness, type Harness } from "./test-support/harness";
import { pdfText } from "./test-support/pdf";
import { WebhookReceiver, type ReceivedCallback } from "./test-support/webhook-receiver";

/**
 * What Pressroom keeps: the JOBS stream (90 days) holds a digest and the size
 * of a request's html and data, never the text, which only the RENDER work
 * queue carries until the render is acknowledged; webhook secrets are sealed
 * in PostgreSQL, rotatable, and both secrets sign callbacks for 24 hours
 * after a rotation. Real stack, a real HTTPS receiver.
 */

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const hmac = (secret: string, callback: ReceivedCallback, t: string) => createHmac("sha256", secret).update(`${t}.${callback.rawBody}`).digest("hex");

function signatures(callback: ReceivedCallback): { t: string; v1: string[] } {
  const parts = callback.headers["x-service-signature"]!.split(",").map((part) => part.split("=") as [string, string]);
  return { t: parts.find(([k]) => k === "t")![1], v1: parts.filter(([k]) => k === "v1").map(([, v]) => v) };
}

describe("retention: no request text in JOBS, sealed and rotatable webhook secrets", () => {
  const receiver = new WebhookReceiver();
  let h: Harness;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let db: pg.Client;

  before(async () => {
    await receiver.start();
    h = await startHarness({ serviceEnv: { webhook: receiver.env() } });
    nc = await connect({ servers: h.stack.natsUrl });
    jsm = await nc.jetstreamManager();
    db = new pg.Client({ connectionString: h.stack.databaseUrl });
    await db.connect();
  });

  after(async () => {
    await db?.end();
    await nc?.close();
    await h?.stop();
    await receiver.stop();
  });

  /** Every message of a stream, raw. */
  async function rawStream(stream: string): Promise<string> {
    const { state } = await jsm.streams.info(stream);
    const texts: string[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const msg = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
      if (msg) texts.push(Buffer.from(msg.data).toString("latin1"));
    }
    return texts.join("\n");
  }

  it("JOBS keeps the digest and size of html and data, not their text; the RENDER command is gone once rendered", async () => {
    const { apiKey } = await h.admin.createKey("business");
    const marker = randomBytes(8).toString("hex");
    const html = `<p>Patient file HTML-${marker}: {{ssn}}</p>`;
    const data = { ssn: `DATA-${marker}` };
    const response = await h.api.post("/v1/render", { html, data }, { key: apiKey });
    assert.equal(response.status, 200, response.text);
    const text = pdfText((await h.api.download(response.json.url)).body);
    assert.match(text, new RegExp(`HTML-${marker}: DATA-${marker}`), "the worker had the html and the data");

    const [accepted] = await readJobEvents(jsm, response.json.id);
    assert.equal(accepted!.event.type, "job.accepted");
    const a = accepted!.event.accepted!;
    assert.deepEqual(
      { html: a.html, dataJson: a.dataJson, htmlSha256: a.htmlSha256, htmlBytes: a.htmlBytes, dataSha256: a.dataSha256, dataBytes: a.dataBytes },
      {
        html: "",
        dataJson: "",
        htmlSha256: sha256(html),
        htmlBytes: Buffer.byteLength(html),
        dataSha256: sha256(JSON.stringify(data)),
        dataBytes: JSON.stringify(data).length,
      },
    );
    const jobs = await rawStream(streams.JOBS);
    assert.ok(jobs.length > 0);
    assert.ok(!jobs.includes(marker), "no trace of the html or the data anywhere in JOBS");
    await waitFor("the RENDER command acknowledged and deleted", async () => (await jsm.streams.info(streams.RENDER)).state.messages === 0, 10_000);
    assert.ok(!(await rawStream(streams.RENDER)).includes(marker));
  });

  it("webhook secrets are sealed at rest; rotating answers a new one, and for 24 h after each rotation callbacks carry a v1 for each, rotated twice too", async () => {
    const { apiKey, keyId } = await h.admin.createKey("business");
    const old = (await h.api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret as string;
    const stored = async () => (await db.query("select * from identity.api_keys where key_id = $1", [keyId])).rows[0];
    const before = await stored();
    assert.equal(before.webhook_secret, null, "no plaintext column value");
    assert.match(before.webhook_secret_sealed, /^v1\./);
    assert.ok(!JSON.stringify(before).includes(old.slice(6)), "the secret is nowhere in the row");

    const rotated = await h.api.post("/v1/keys/webhook-secret/rotate", undefined, { key: apiKey });
    assert.equal(rotated.status, 200, rotated.text);
    assert.deepEqual(Object.keys(rotated.json).sort(), ["previous_secret_expires_at", "secret"]);
    const fresh = rotated.json.secret as string;
    assert.match(fresh, /^whsec_/);
    assert.notEqual(fresh, old);
    const hoursLeft = (Date.parse(rotated.json.previous_secret_expires_at) - Date.now()) / 3_600_000;
    assert.ok(hoursLeft > 23.9 && hoursLeft <= 24, `${hoursLeft} h`);
    assert.equal((await h.api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret, fresh);
    const after = await stored();
    assert.ok(!JSON.stringify(after).includes(old.slice(6)) && !JSON.stringify(after).includes(fresh.slice(6)), "both secrets sealed");

    const submit = async (path: string) => {
      const response = await h.api.post("/v1/render", { html: "<p>x</p>", data: {}, webhook_url: receiver.url(path) }, { key: apiKey });
      assert.equal(response.status, 202, response.text);
      const [callback] = await receiver.waitFor(path, 1, 60_000);
      return callback!;
    };
    const during = await submit("/rotating");
    const { t, v1 } = signatures(during);
    assert.deepEqual(v1, [hmac(fresh, during, t), hmac(old, during, t)], "one v1 per secret, the new one first");
    assert.equal(during.headers["webhook-signature"]!.split(" ").length, 2);

    // A second rotation within the window: the original keeps signing until its own 24 h end.
    const again = await h.api.post("/v1/keys/webhook-secret/rotate", undefined, { key: apiKey });
    assert.equal(again.status, 200, again.text);
    const newest = again.json.secret as string;
    const twice = await submit("/rotated-twice");
    const both = signatures(twice);
    assert.deepEqual(
      both.v1,
      [hmac(newest, twice, both.t), hmac(fresh, twice, both.t), hmac(old, twice, both.t)],
      "the newest, the first rotated and the original",
    );
    assert.equal(twice.headers["webhook-signature"]!.split(" ").length, 3);
    const row = await stored();
    assert.equal(row.older_webhook_secrets.length, 1);
    assert.ok(![old, fresh, newest].some((secret) => JSON.stringify(row).includes(secret.slice(6))), "every secret sealed");

    // Each replaced secret's window ends on its own: first the original's, then the first rotated one's.
    await db.query(
      `update identity.api_keys set older_webhook_secrets = jsonb_set(older_webhook_secrets, '{0,expires_at}',
         to_jsonb(to_char(now() at time zone 'utc' - interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))) where key_id = $1`,
      [keyId],
    );
    const originalEnded = await submit("/original-ended");
    const two = signatures(originalEnded);
    assert.deepEqual(two.v1, [hmac(newest, originalEnded, two.t), hmac(fresh, originalEnded, two.t)], "the original's window ended");
    await db.query("update identity.api_keys set previous_webhook_secret_expires_at = now() - interval '1 second' where key_id = $1", [keyId]);
    const later = await submit("/rotated");
    const afterExpiry = signatures(later);
    assert.deepEqual(afterExpiry.v1, [hmac(newest, later, afterExpiry.t)], "after the 24 h, the newest secret alone");
  });

  it("a plaintext secret left by an earlier version is sealed by identity's one-off step, and stays the key's secret", async () => {
    const { apiKey, keyId } = await h.admin.createKey("business");
    const legacy = `whsec_${randomBytes(32).toString("base64")}`;
    h.api.remember(legacy);
    await db.query("update identity.api_keys set webhook_secret = $2, webhook_secret_sealed = null where key_id = $1", [keyId, legacy]);
    assert.equal((await h.api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret, legacy, "read as it is until sealed");

    await runMigrations({ adminUrl: h.stack.databaseUrl, urls: h.stack.databaseUrls }, h.stack.secretEncryptionKey);
    const row = (await db.query("select webhook_secret, webhook_secret_sealed from identity.api_keys where key_id = $1", [keyId])).rows[0];
    assert.equal(row.webhook_secret, null);
    assert.match(row.webhook_secret_sealed, /^v1\./);
    assert.equal((await h.api.get("/v1/keys/webhook-secret", { key: apiKey })).json.secret, legacy);
    const plaintextLeft = await db.query("select count(*)::int as n from identity.api_keys where webhook_secret is not null");
    assert.equal(plaintextLeft.rows[0].n, 0);
  });

  endOfSuiteChecks(() => h);
});
