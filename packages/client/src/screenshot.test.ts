import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Pressroom } from "./index";
import { TestServer, json, serverForSuite } from "./test-support/server";

const API_KEY = "pr_test_key_0123456789";
const succeeded = {
  id: "job_01",
  status: "succeeded",
  url: "http://127.0.0.1/v1/outputs/out_1?exp=1&sig=ab",
  expires_at: "2026-01-02T00:00:00.000Z",
  content_type: "image/png",
  size_bytes: 1234,
};

describe("Pressroom's screenshots over HTTP", () => {
  let server: TestServer;
  let client: Pressroom;
  serverForSuite((s, c) => {
    server = s;
    client = c;
  }, API_KEY);

  it("screenshot posts html or a url with its options to /v1/screenshot; screenshotDocument asks for the image's type", async () => {
    server.handler = (_req, res) => json(res, 200, { ...succeeded, content_type: "image/png" });
    const request = { html: "<h1>{{t}}</h1>", data: { t: "Hi" }, options: { width: 800, height: 600, device_scale_factor: 2, selector: "h1" } };
    assert.equal((await client.screenshot(request)).status, "succeeded");
    assert.deepEqual([server.last.method, server.last.url, server.last.headers.authorization], ["POST", "/v1/screenshot", `Bearer ${API_KEY}`]);
    assert.deepEqual(JSON.parse(server.last.body), request);
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0]);
    server.handler = (_req, res) => {
      res.writeHead(200, {
        "Content-Type": "image/jpeg",
        "Pressroom-Job-Id": "job_09",
        "Content-Location": succeeded.url,
        "Pressroom-Expires-At": succeeded.expires_at,
      });
      res.end(jpeg);
    };
    const shot = await client.screenshotDocument({ url: "https://example.com/", options: { format: "jpeg", full_page: true } });
    assert.ok(shot.status === "succeeded");
    assert.deepEqual([shot.id, shot.content_type, Buffer.from(shot.bytes)], ["job_09", "image/jpeg", jpeg]);
    assert.deepEqual([server.last.url, server.last.headers.accept], ["/v1/screenshot", "image/jpeg"]);
  });
});
