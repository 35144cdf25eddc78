import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Pressroom } from "./index";
import { TestServer, json, serverForSuite } from "./test-support/server";

describe("Pressroom's batches over HTTP", () => {
  let server: TestServer;
  let client: Pressroom;
  serverForSuite((s, c) => {
    server = s;
    client = c;
  });

  it("batches: createBatch posts the items with an Idempotency-Key, batch, batchItems and cancelBatch reach their paths", async () => {
    const batch = {
      id: "bat_01",
      status: "accepted",
      total: 2,
      counts: { queued: 2, running: 0, succeeded: 0, failed: 0 },
      created_at: "2026-11-28T00:00:00.000Z",
      archive: null,
    };
    server.handler = (req, res) => {
      if (req.url === "/v1/batches/bat_01/items?limit=1&cursor=0")
        return json(res, 200, { data: [{ index: 1, job_id: "job_2", status: "queued" }], next_cursor: null });
      return json(res, req.method === "POST" ? 202 : 200, req.method === "DELETE" ? { ...batch, status: "cancelled" } : batch);
    };
    const request = {
      items: [
        { template_id: "invoice", data: { n: 1 } },
        { kind: "image" as const, template_id: "social-card", data: {} },
      ],
      webhook_url: "https://example.com/hook",
      archive: true,
    };
    assert.deepEqual(await client.createBatch(request, { idempotencyKey: "month-end" }), batch);
    assert.equal(server.last.method, "POST");
    assert.equal(server.last.url, "/v1/batches");
    assert.equal(server.last.headers["idempotency-key"], "month-end");
    assert.deepEqual(JSON.parse(server.last.body), request);
    assert.equal((await client.batch("bat_01")).id, "bat_01");
    assert.equal(server.last.url, "/v1/batches/bat_01");
    assert.deepEqual((await client.batchItems("bat_01", { limit: 1, cursor: "0" })).data, [{ index: 1, job_id: "job_2", status: "queued" }]);
    assert.equal((await client.cancelBatch("bat_01")).status, "cancelled");
    assert.deepEqual([server.last.method, server.last.url], ["DELETE", "/v1/batches/bat_01"]);
  });
});
