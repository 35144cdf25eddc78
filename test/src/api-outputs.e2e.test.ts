import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { storeOutput } from "@pressroom/domain";
import { connect, type NatsConnection, type ObjectStore } from "nats";
import pg from "pg";
import { errorShape, type ApiResponse } from "./test-support/api";
import { WITHOUT_RENDER, clientsAs, endOfSuiteChecks, startHarness, type Harness, type PeerClients } from "./test-support/harness";

/**
 * Signed output URLs over HTTP against the running gateway and storage
 * services, with outputs in the real JetStream object store: download and its
 * headers, tampering, expiry, the sweep that deletes expired outputs, and
 * deletion by the key that rendered them. Outputs are stored as the render
 * worker stores them (chunks into the bucket, then storage's RegisterOutput),
 * so no render pool is needed.
 */

const TTL_SECONDS = 86_400;

function expectError(response: ApiResponse, status: number, code: string): void {
  const body = errorShape(response);
  assert.equal(response.status, status, response.text);
  assert.equal(body.code, code, response.text);
}

/** Outputs up to this size are kept in storage's memory in this suite; larger ones are read from the object store. */
const CACHED_UP_TO = 16_384;
const fakePdf = (text: string) => Buffer.from(`%PDF-1.4\n% ${text}\n${"0".repeat(2_000)}\n%%EOF\n`);

describe("outputs: signed download URLs", () => {
  let h: Harness;
  let nc: NatsConnection;
  let store: ObjectStore;
  let db: pg.Client;
  let render: PeerClients;

  before(async () => {
    h = await startHarness({
      only: WITHOUT_RENDER,
      serviceEnv: { storage: { SWEEP_INTERVAL_MS: "1000", OUTPUT_CACHE_MAX_ENTRY_BYTES: String(CACHED_UP_TO) } },
    });
    // Outputs are registered by render.
    render = clientsAs(h.stack, "render");
    nc = await connect({ servers: h.stack.natsUrl });
    store = await nc.jetstream().views.os("outputs");
    db = new pg.Client({ connectionString: h.stack.databaseUrl });
    await db.connect();
  });

  after(async () => {
    await db?.end();
    render?.close();
    await nc?.close();
    await h?.stop();
  });

  const store$ = (bytes: Buffer, contentType: string, filename: string, attachment = false, more: { keyId?: string; ttlSeconds?: number } = {}) =>
    storeOutput(
      { storage: render.storage, js: nc.jetstream(), bucket: "outputs" },
      { outputId: "", contentType, filename, jobId: "job_test", keyId: more.keyId ?? "key_test", attachment, ttlSeconds: more.ttlSeconds ?? 0 },
      bytes,
    );

  describe("download", () => {
    it("serves the bytes with Content-Type, Content-Length, Content-Disposition, Referrer-Policy and private caching", async () => {
      const bytes = fakePdf("invoice");
      const stored = await store$(bytes, "application/pdf", "invoice-job_0abc.pdf");
      h.api.remember(new URL(stored.url).searchParams.get("sig")!);
      const url = new URL(stored.url);
      assert.equal(url.origin, h.stack.baseUrl);
      assert.equal(url.pathname, `/v1/outputs/${stored.outputId}`);
      assert.deepEqual([...url.searchParams.keys()], ["exp", "sig"]);
      const exp = Number(url.searchParams.get("exp"));
      assert.ok(Math.abs(exp - (Date.now() / 1000 + TTL_SECONDS)) < 60, "exp is Unix seconds, 24 h ahead");
      assert.equal(stored.expiresAt, new Date(exp * 1000).toISOString());
      assert.match(url.searchParams.get("sig")!, /^[0-9a-f]{64}$/);

      const response = await h.api.download(stored.url);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, bytes);
      assert.equal(response.headers["content-type"], "application/pdf");
      assert.equal(response.headers["content-length"], String(bytes.length));
      assert.equal(response.headers["content-disposition"], `inline; filename="invoice-job_0abc.pdf"; filename*=UTF-8''invoice-job_0abc.pdf`);
      assert.equal(response.headers["referrer-policy"], "no-referrer");
      assert.equal(response.headers["x-content-type-options"], "nosniff");
      const cache = /^private, max-age=(\d+)$/.exec(response.headers["cache-control"] ?? "");
      assert.ok(cache, response.headers["cache-control"]);
      assert.ok(Number(cache[1]) > TTL_SECONDS - 120 && Number(cache[1]) <= TTL_SECONDS, "cached privately, at most until expiry");
      assert.equal(response.headers["ratelimit-limit"], undefined, "downloads are authorised by the URL, not a key");
    });

    it("streams large outputs intact, serves PNGs, HEAD, and names non-ASCII files safely", async () => {
      const big = randomBytes(3 * 1024 * 1024 + 17);
      const large = await store$(big, "image/png", "social-card-job_1.png");
      const response = await h.api.download(large.url);
      assert.equal(response.status, 200);
      assert.equal(response.headers["content-type"], "image/png");
      assert.equal(response.body.length, big.length);
      assert.ok(response.body.equals(big), "bytes intact across chunks");

      const head = await h.api.download(large.url, { method: "HEAD" });
      assert.equal(head.status, 200);
      assert.equal(head.headers["content-length"], String(big.length));
      assert.equal(head.body.length, 0);
      assert.equal(head.headers["referrer-policy"], "no-referrer");

      const named = await store$(fakePdf("été"), "application/pdf", 'rapport "été"\\-job_2.pdf');
      const disposition = (await h.api.download(named.url)).headers["content-disposition"];
      assert.equal(disposition, `inline; filename="rapport __t___-job_2.pdf"; filename*=UTF-8''${encodeURIComponent('rapport "été"\\-job_2.pdf')}`);

      const attached = await store$(fakePdf("a"), "application/pdf", "Rechnung März.pdf", true);
      const attachment = (await h.api.download(attached.url)).headers["content-disposition"];
      assert.equal(attachment, `attachment; filename="Rechnung M_rz.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`);
    });
  });

  describe("ranges", () => {
    it("a Range header is answered 206 with Content-Range, across the store's chunks; downloads say Accept-Ranges: bytes", async () => {
      // 3 MiB read from the object store in chunks, and a small output served from storage's memory after its first download.
      const big = randomBytes(3 * 1024 * 1024 + 17);
      const small = fakePdf("ranges");
      for (const [bytes, contentType] of [
        [big, "image/png"],
        [small, "application/pdf"],
      ] as const) {
        const stored = await store$(bytes, contentType, "ranged.bin");
        const whole = await h.api.download(stored.url);
        assert.equal(whole.status, 200);
        assert.equal(whole.headers["accept-ranges"], "bytes");
        const size = bytes.length;
        const cases: [string, number, number][] = [
          ["bytes=0-0", 0, 0],
          ["bytes=10-1033", 10, 1033],
          [`bytes=${size - 100}-`, size - 100, size - 1],
          ["bytes=-64", size - 64, size - 1],
          [`bytes=5-${size + 1000}`, 5, size - 1],
          ...(size > 300_000 ? ([["bytes=131000-262200", 131_000, 262_200]] as [string, number, number][]) : []),
        ];
        for (const [range, start, end] of cases) {
          const part = await h.api.download(stored.url, { headers: { range } });
          assert.equal(part.status, 206, `${range}: ${part.text}`);
          assert.equal(part.headers["content-range"], `bytes ${start}-${end}/${size}`, range);
          assert.equal(part.headers["content-length"], String(end - start + 1), range);
          assert.equal(part.headers["accept-ranges"], "bytes");
          assert.equal(part.headers["content-type"], contentType);
          assert.ok(part.body.equals(bytes.subarray(start, end + 1)), `${range}: the bytes asked for`);
        }
        for (const whole of ["bytes=0-1,5-9", "items=0-5", "bytes=9-2", "bytes=abc"]) {
          const answer = await h.api.download(stored.url, { headers: { range: whole } });
          assert.equal(answer.status, 200, whole);
          assert.ok(answer.body.equals(bytes), `${whole}: the whole output`);
        }
        const ifRange = await h.api.download(stored.url, { headers: { range: "bytes=0-9", "if-range": '"x"' } });
        assert.equal(ifRange.status, 200, "If-Range cannot match: outputs have no validator");
        for (const past of [`bytes=${size}-`, `bytes=${size + 5}-${size + 9}`, "bytes=-0"]) {
          const refused = await h.api.download(stored.url, { headers: { range: past } });
          assert.equal(refused.status, 416, past);
          expectError(refused, 416, "RANGE_NOT_SATISFIABLE");
        }
        const head = await h.api.download(stored.url, { method: "HEAD" });
        assert.equal(head.headers["accept-ranges"], "bytes");
      }
    });
  });

  describe("signatures", () => {
    it("a tampered id, exp or sig, or a malformed URL, is 403 URL_INVALID", async () => {
      const a = await store$(fakePdf("a"), "application/pdf", "a.pdf");
      const b = await store$(fakePdf("b"), "application/pdf", "b.pdf");
      const url = new URL(a.url);
      const exp = url.searchParams.get("exp")!;
      const sig = url.searchParams.get("sig")!;
      const flip = (hex: string, i: number) => `${hex.slice(0, i)}${hex[i] === "0" ? "1" : "0"}${hex.slice(i + 1)}`;
      const tampered = [
        `/v1/outputs/${b.outputId}?exp=${exp}&sig=${sig}`,
        `/v1/outputs/${a.outputId}?exp=${Number(exp) + 1}&sig=${sig}`,
        `/v1/outputs/${a.outputId}?exp=${Number(exp) + 86_400 * 365}&sig=${sig}`,
        `/v1/outputs/${a.outputId}?exp=${exp}&sig=${flip(sig, 0)}`,
        `/v1/outputs/${a.outputId}?exp=${exp}&sig=${flip(sig, 63)}`,
        `/v1/outputs/${a.outputId}?exp=${exp}&sig=${sig.toUpperCase()}`,
        `/v1/outputs/${a.outputId}?exp=${exp}&sig=${sig.slice(0, 63)}`,
        `/v1/outputs/${a.outputId}?exp=${exp}&sig=${sig}00`,
        `/v1/outputs/${a.outputId}?exp=${exp}`,
        `/v1/outputs/${a.outputId}?sig=${sig}`,
        `/v1/outputs/${a.outputId}`,
        `/v1/outputs/${a.outputId}?exp=${exp}.0&sig=${sig}`,
        `/v1/outputs/${a.outputId}?exp=${exp}&sig=${sig}&sig=${sig}`,
        `/v1/outputs/${a.outputId}x?exp=${exp}&sig=${sig}`,
        `/v1/outputs/${a.outputId.toUpperCase()}?exp=${exp}&sig=${sig}`,
        `/v1/outputs/..%2F..%2Fetc%2Fpasswd?exp=${exp}&sig=${sig}`,
      ];
      for (const path of tampered) {
        const response = await h.api.get(path);
        expectError(response, 403, "URL_INVALID");
        assert.match(errorShape(response).hint, /exact URL/);
      }
      assert.equal((await h.api.download(a.url)).status, 200, "the genuine URL still works");
    });

    it("an expired URL is 410 URL_EXPIRED; an expired and tampered one is 403", async () => {
      const stored = await store$(fakePdf("old"), "application/pdf", "old.pdf");
      const past = Math.floor(Date.now() / 1000) - 5;
      const sig = createHmac("sha256", h.stack.signingSecret).update(`${stored.outputId}.${past}`).digest("hex");
      h.api.remember(sig);
      const expired = await h.api.get(`/v1/outputs/${stored.outputId}?exp=${past}&sig=${sig}`);
      expectError(expired, 410, "URL_EXPIRED");
      assert.match(errorShape(expired).hint, /again/);
      expectError(await h.api.get(`/v1/outputs/${stored.outputId}?exp=${past - 1}&sig=${sig}`), 403, "URL_INVALID");
    });
  });

  describe("expiry", () => {
    it("the bucket expires objects by itself an hour after the longest an output may live (7 days, when its request asks)", async () => {
      const jsm = await nc.jetstreamManager();
      const info = await jsm.streams.info("OBJ_outputs");
      assert.equal(info.config.max_age, (604_800 + 3_600) * 1e9);
      assert.equal(info.config.storage, "file");
    });

    it("the sweep deletes expired outputs from the JetStream object store; their URLs then answer 410", async () => {
      const expiring = await store$(fakePdf("expiring"), "application/pdf", "expiring.pdf");
      const keeping = await store$(fakePdf("keeping"), "application/pdf", "keeping.pdf");
      assert.equal((await h.api.download(expiring.url)).status, 200);
      assert.ok(await store.get(expiring.outputId), "the object is in the store");

      // Make the output due (as if its 24 h had passed); the URL itself stays valid until its exp.
      await db.query("update storage.outputs set expires_at = now() - interval '1 second' where output_id = $1", [expiring.outputId]);
      const deadline = Date.now() + 15_000;
      while ((await store.get(expiring.outputId)) !== null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      assert.equal(await store.get(expiring.outputId), null, "the sweep deleted the object");
      const { rows } = await db.query("select deleted_at from storage.outputs where output_id = $1", [expiring.outputId]);
      assert.ok(rows[0].deleted_at instanceof Date, "and marked the row deleted");
      const listed = (await store.list()).map((entry) => entry.name);
      assert.ok(!listed.includes(expiring.outputId));
      assert.ok(listed.includes(keeping.outputId), "live outputs stay");

      const gone = await h.api.download(expiring.url);
      expectError(gone, 410, "URL_EXPIRED");
      assert.equal((await h.api.download(keeping.url)).status, 200);
      assert.match(h.stack.output(), /expired outputs deleted/);
    });

    it("an output downloaded once is served from storage's memory after, without the object store", async () => {
      const bytes = fakePdf("recent");
      const stored = await store$(bytes, "application/pdf", "recent.pdf");
      assert.deepEqual((await h.api.download(stored.url)).body, bytes);
      await store.delete(stored.outputId);
      const response = await h.api.download(stored.url);
      assert.equal(response.status, 200);
      assert.deepEqual(response.body, bytes);
    });

    it("an output missing from the store (e.g. removed by the bucket's max age) and not in memory is 410", async () => {
      const large = Buffer.concat([fakePdf("lost"), Buffer.alloc(CACHED_UP_TO, 0x20)]);
      const stored = await store$(large, "application/pdf", "lost.pdf");
      assert.equal((await h.api.download(stored.url)).status, 200);
      await store.delete(stored.outputId);
      expectError(await h.api.download(stored.url), 410, "URL_EXPIRED");
    });
  });

  describe("the customer's control", () => {
    it("an output asked to live 2 minutes: its URL expires with it, and downloads are cached privately no longer", async () => {
      const stored = await store$(fakePdf("short"), "application/pdf", "short.pdf", false, { ttlSeconds: 120 });
      h.api.remember(new URL(stored.url).searchParams.get("sig")!);
      const exp = Number(new URL(stored.url).searchParams.get("exp"));
      assert.ok(Math.abs(exp - (Date.now() / 1000 + 120)) < 10, "exp is 2 minutes ahead");
      const response = await h.api.download(stored.url);
      assert.equal(response.status, 200);
      const maxAge = Number(/^private, max-age=(\d+)$/.exec(response.headers["cache-control"] ?? "")?.[1]);
      assert.ok(maxAge > 100 && maxAge <= 120, `max-age ${maxAge}: at most the output's remaining life`);
    });

    it("DELETE /v1/outputs/{id} with the key that rendered it: 204, its URL then 410 and nothing of it stored; for another key it does not exist", async () => {
      const owner = await h.admin.createKey("pro");
      const other = await h.admin.createKey("pro");
      const bytes = fakePdf("to be deleted");
      const stored = await store$(bytes, "application/pdf", "deleted.pdf", false, { keyId: owner.keyId });
      h.api.remember(new URL(stored.url).searchParams.get("sig")!);
      assert.deepEqual((await h.api.download(stored.url)).body, bytes, "downloaded once: storage keeps it in memory");
      const remove = (id: string, key?: string) => h.api.request("DELETE", `/v1/outputs/${id}`, key ? { key } : {});

      expectError(await remove(stored.outputId), 401, "AUTH_INVALID");
      const foreign = await remove(stored.outputId, other.apiKey);
      expectError(foreign, 404, "NOT_FOUND");
      assert.match(errorShape(foreign).hint, /key that rendered it/);
      expectError(await remove("out_0000000000000000000000000", owner.apiKey), 404, "NOT_FOUND");
      expectError(await remove("..%2Fjob_1", owner.apiKey), 404, "NOT_FOUND");
      assert.deepEqual((await h.api.download(stored.url)).body, bytes, "another key's delete changed nothing");

      const deleted = await remove(stored.outputId, owner.apiKey);
      assert.equal(deleted.status, 204, deleted.text);
      assert.equal(deleted.body.length, 0);
      assert.match(deleted.headers["ratelimit-remaining"] ?? "", /^\d+$/, "counted like any keyed request");
      expectError(await h.api.download(stored.url), 410, "URL_EXPIRED");
      assert.equal((await h.api.download(stored.url, { method: "HEAD" })).status, 410);
      expectError(await h.api.download(stored.url, { headers: { range: "bytes=0-9" } }), 410, "URL_EXPIRED");
      const { rows } = await db.query("select 1 from storage.outputs where output_id = $1", [stored.outputId]);
      assert.deepEqual(rows, [], "no row");
      assert.equal(await store.get(stored.outputId), null, "no object");
      const jsm = await nc.jetstreamManager();
      const subjects = Object.keys((await jsm.streams.info("OBJ_outputs", { subjects_filter: ">" })).state.subjects ?? {});
      const infoSubject = `$O.outputs.M.${Buffer.from(stored.outputId).toString("base64").replace(/\+/g, "-").replace(/\//g, "_")}`;
      assert.ok(subjects.length > 0, "the stream lists its subjects");
      assert.ok(!subjects.includes(infoSubject), "not even a deleted marker of it in the bucket's stream");
      expectError(await remove(stored.outputId, owner.apiKey), 404, "NOT_FOUND");
    });

    it("an output deleted through another replica (its row gone from the shared database) is 410 here, though this storage holds its bytes", async () => {
      const bytes = fakePdf("elsewhere");
      const stored = await store$(bytes, "application/pdf", "elsewhere.pdf");
      h.api.remember(new URL(stored.url).searchParams.get("sig")!);
      assert.deepEqual((await h.api.download(stored.url)).body, bytes);
      assert.deepEqual((await h.api.download(stored.url)).body, bytes, "served from storage's memory");
      await db.query("delete from storage.outputs where output_id = $1", [stored.outputId]);
      expectError(await h.api.download(stored.url), 410, "URL_EXPIRED");
    });
  });

  endOfSuiteChecks(() => h);
});
