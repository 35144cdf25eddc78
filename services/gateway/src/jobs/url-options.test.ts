import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AppError } from "@pressroom/platform";
import { validateJobRequest } from "./request";

const URL = "https://example.com/report";

function refused(kind: "render" | "image", body: Record<string, unknown>): AppError {
  const result = validateJobRequest(kind, body);
  assert.ok(result instanceof AppError, "expected a validation error");
  assert.equal(result.code, "PAYLOAD_INVALID");
  assert.ok(result.hint, "a refusal says what to do");
  return result;
}
const render = (url_options: unknown) => refused("render", { url: URL, url_options }).message;

describe("validateJobRequest: url_options", () => {
  it("maps headers, cookies, basic auth and user agent onto the job contract, for a url, a part's url and an image's url", () => {
    const url_options = {
      headers: { Authorization: "Bearer t0k3n", "X-Tenant": "acme" },
      cookies: [
        { name: "session", value: "abc123" },
        { name: "pref", value: "dark", path: "/reports" },
      ],
      user_agent: "ReportBot/1.0",
    };
    const request = validateJobRequest("render", { url: URL, url_options });
    assert.ok(!(request instanceof AppError));
    assert.deepEqual(request.urlOptions, {
      headers: { Authorization: "Bearer t0k3n", "X-Tenant": "acme" },
      cookies: [
        { name: "session", value: "abc123", path: undefined },
        { name: "pref", value: "dark", path: "/reports" },
      ],
      basicAuth: undefined,
      userAgent: "ReportBot/1.0",
    });
    const parts = validateJobRequest("render", {
      documents: [{ url: URL, url_options: { basic_auth: { username: "ada", password: "pw" } } }, { html: "<p>x</p>" }],
    });
    assert.ok(!(parts instanceof AppError));
    assert.deepEqual(parts.documents?.[0]?.urlOptions?.basicAuth, { username: "ada", password: "pw" });
    assert.equal(parts.documents?.[1]?.urlOptions, undefined);
    const image = validateJobRequest("image", { url: URL, url_options: { cookies: [{ name: "s", value: "v" }] } });
    assert.ok(!(image instanceof AppError));
    assert.equal(image.urlOptions?.cookies[0]?.value, "v");
  });

  it("applies to a url source only", () => {
    assert.match(refused("render", { html: "<p>x</p>", data: {}, url_options: { user_agent: "x" } }).message, /^url_options: applies to a url source only$/);
    assert.match(refused("image", { template_id: "og-image", data: {}, url_options: {} }).message, /^url_options: applies to a url source only$/);
    assert.match(
      refused("render", { documents: [{ html: "<p>x</p>", url_options: { user_agent: "x" } }] }).message,
      /^documents\.0\.url_options: applies to a url source only$/,
    );
  });

  it("refuses headers the engine sets or another field carries, naming the header", () => {
    assert.match(render({ headers: { Host: "evil.example" } }), /^url_options\.headers\.Host: is set from the url$/);
    assert.match(render({ headers: { "content-length": "5" } }), /^url_options\.headers\.content-length: is set by the engine$/);
    assert.match(render({ headers: { Cookie: "a=b" } }), /^url_options\.headers\.Cookie: goes in url_options\.cookies$/);
    assert.match(render({ headers: { "User-Agent": "x" } }), /^url_options\.headers\.User-Agent: goes in url_options\.user_agent$/);
    assert.match(
      render({ headers: { Authorization: "Bearer x" }, basic_auth: { username: "a", password: "b" } }),
      /^url_options\.basic_auth: conflicts with headers\.Authorization$/,
    );
  });

  it("refuses malformed, too many and too large headers and cookies, never echoing a value", () => {
    const secret = "s3cret-value";
    const messages = [
      render({ headers: { "X-A": `${secret}\r\nX-Injected: 1` } }),
      render({ headers: { "Bad Name\r\n": secret } }),
      render({ headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-${i}`, secret])) }),
      render({ headers: { "X-Big": `${secret}${"a".repeat(4096)}` } }),
      render({ headers: { "X-A": "a".repeat(4000), "X-B": "b".repeat(4000), "X-C": secret.repeat(30) } }),
      render({ headers: { "X-A": 1 } }),
      render({ cookies: [{ name: "session", value: `${secret};Path=/` }] }),
      render({ cookies: [{ name: "a=b", value: secret }] }),
      render({ cookies: [{ name: "a", value: secret, path: "reports" }] }),
      render({ cookies: Array.from({ length: 21 }, (_, i) => ({ name: `c${i}`, value: secret })) }),
      render({ basic_auth: { username: "ada:lovelace", password: secret } }),
      render({ basic_auth: { username: "ada", password: `${secret}\n` } }),
      render({ user_agent: `${secret}\r\n` }),
      render({ user_agent: "" }),
      render({ proxy: secret }),
    ];
    assert.deepEqual(
      messages.map((message) => message.replace(/:.*$/, "")),
      [
        "url_options.headers.X-A",
        "url_options.headers",
        "url_options.headers",
        "url_options.headers.X-Big",
        "url_options",
        "url_options.headers.X-A",
        "url_options.cookies.0.value",
        "url_options.cookies.0.name",
        "url_options.cookies.0.path",
        "url_options.cookies",
        "url_options.basic_auth.username",
        "url_options.basic_auth.password",
        "url_options.user_agent",
        "url_options.user_agent",
        "url_options",
      ],
    );
    for (const message of messages) assert.ok(!message.includes(secret), message);
  });
});
