import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Pressroom, PressroomError } from "./index";
import { TestServer, json, serverForSuite } from "./test-support/server";

describe("Pressroom's waits over HTTP: async jobs and a slot", () => {
  let server: TestServer;
  let client: Pressroom;
  serverForSuite((s, c) => {
    server = s;
    client = c;
  });

  it("render and image with async: true are queued at once; waitForJob polls the job until it ended, and gives up after timeoutMs", async () => {
    server.handler = (_req, res) => json(res, 202, { id: "job_03", status: "queued" }, { Location: "/v1/jobs/job_03" });
    const queued = await client.render({ html: "<p>x</p>", data: {}, async: true });
    assert.deepEqual(queued, { id: "job_03", status: "queued" });
    assert.deepEqual(JSON.parse(server.last.body), { html: "<p>x</p>", data: {}, async: true });
    await client.image({ url: "https://example.com/", data: {}, async: true });
    assert.deepEqual(JSON.parse(server.last.body), { url: "https://example.com/", data: {}, async: true });
    assert.deepEqual(await client.screenshot({ html: "<p>x</p>", async: true }), { id: "job_03", status: "queued" });
    assert.deepEqual([server.last.url, JSON.parse(server.last.body)], ["/v1/screenshot", { html: "<p>x</p>", async: true }]);

    const states = ["queued", "rendering", "succeeded"];
    server.requests.length = 0;
    server.handler = (_req, res) => json(res, 200, { id: "job_03", status: states.shift() });
    assert.equal((await client.waitForJob("job_03", { intervalMs: 10 })).status, "succeeded");
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.url]),
      Array.from({ length: 3 }, () => ["GET", "/v1/jobs/job_03"]),
    );
    server.handler = (_req, res) => json(res, 200, { id: "job_04", status: "rendering" });
    await assert.rejects(
      client.waitForJob("job_04", { timeoutMs: 50, intervalMs: 10 }),
      (err: PressroomError) => err.code === "TIMEOUT" && /job job_04 is still rendering/.test(err.message),
    );
  });

  it("sends waitForSlot as Prefer: wait=N on render, image and their documents, and refuses one out of 1 to 60", async () => {
    server.handler = (_req, res) => json(res, 202, { id: "job_05", status: "queued" });
    await client.render({ html: "<p>x</p>", data: {} }, { waitForSlot: 30 });
    assert.equal(server.last.headers.prefer, "wait=30");
    await client.imageDocument({ template_id: "og-image", data: {} }, { waitForSlot: 60 });
    assert.equal(server.last.headers.prefer, "wait=60");
    await client.render({ html: "<p>x</p>", data: {} });
    assert.equal(server.last.headers.prefer, undefined);
    for (const bad of [0, 61, 1.5]) {
      await assert.rejects(client.render({ html: "<p>x</p>", data: {} }, { waitForSlot: bad }), /waitForSlot must be a whole number of seconds from 1 to 60/);
    }
  });
});
