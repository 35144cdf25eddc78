import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Pressroom } from "./index";
import { TestServer, json } from "./test-support/server";

const API_KEY = "pr_test_key_0123456789";

/** The account's lists and a callback's replay, over HTTP against a local server. */
describe("Pressroom's lists", () => {
  let server: TestServer;
  let client: Pressroom;

  before(async () => {
    server = await TestServer.start();
    client = new Pressroom({ apiKey: API_KEY, baseUrl: server.baseUrl });
  });
  after(async () => {
    await server.close();
  });

  it("the lists send their filters as query parameters (only those given), and replay posts to the delivery's path", async () => {
    const delivery = { id: "dlv_1", event_id: "evt_1", event_type: "job.succeeded", job_id: "job_1", attempt: 3, status: "pending" };
    server.handler = (req, res) =>
      req.method === "POST" ? json(res, 202, delivery) : json(res, 200, req.url!.startsWith("/v1/keys") ? { data: [] } : { data: [], next_cursor: null });
    assert.deepEqual(await client.jobs(), { data: [], next_cursor: null });
    await client.jobs({ status: "failed", kind: "image", template_id: "card", limit: 5, cursor: "czEy" });
    await client.dailyUsage({ from: "2026-12-01", to: "2026-12-31" });
    await client.dailyUsage();
    await client.webhookDeliveries({ job_id: "job_1", limit: 2 });
    assert.deepEqual(await client.replayWebhookDelivery("dlv_1"), delivery);
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.url]),
      [
        ["GET", "/v1/jobs"],
        ["GET", "/v1/jobs?status=failed&kind=image&template_id=card&limit=5&cursor=czEy"],
        ["GET", "/v1/keys/usage/daily?from=2026-12-01&to=2026-12-31"],
        ["GET", "/v1/keys/usage/daily"],
        ["GET", "/v1/webhooks/deliveries?job_id=job_1&limit=2"],
        ["POST", "/v1/webhooks/deliveries/dlv_1/replay"],
      ],
    );
    assert.ok(server.requests.every((r) => r.headers.authorization === `Bearer ${API_KEY}`));
  });
});
