import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { RedactingSpanExporter, redactQueryValues, redactSecrets } from "./redact";

describe("redactSecrets", () => {
  it("removes a signed URL's sig but keeps the rest", () => {
    const sig = "a".repeat(64);
    const out = redactSecrets(`/v1/outputs/out_1?exp=1700000000&sig=${sig}`);
    assert.equal(out, "/v1/outputs/out_1?exp=1700000000&sig=[redacted]");
    assert.equal(redactSecrets(`http://x/y?sig=${sig}&a=1`), "http://x/y?sig=[redacted]&a=1");
  });

  it("removes API keys, webhook secrets and bearer tokens", () => {
    assert.equal(redactSecrets("key pr_live_ABCdef0123456789xyz used"), "key [redacted-key] used");
    assert.equal(redactSecrets("pr_demo_public_try_pressroom_2026"), "[redacted-key]");
    assert.equal(redactSecrets("whsec_abc-DEF_123="), "[redacted-secret]");
    assert.equal(redactSecrets("Authorization: Bearer abc.def"), "Authorization: Bearer [redacted]");
  });

  it("leaves ordinary text alone", () => {
    assert.equal(redactSecrets("POST /v1/render 200"), "POST /v1/render 200");
    assert.equal(redactSecrets("signature=ok"), "signature=ok");
  });
});

describe("redactQueryValues", () => {
  it("redacts every query value of a URL, keeping the names, the path and the fragment", () => {
    assert.equal(
      redactQueryValues("https://hooks.example.com/pressroom?token=abc123&team=42#frag"),
      "https://hooks.example.com/pressroom?token=[redacted]&team=[redacted]#frag",
    );
    assert.equal(redactQueryValues("https://cdn.example.com/logo.png"), "https://cdn.example.com/logo.png");
    assert.equal(redactQueryValues("X-Amz-Signature=deadbeef&X-Amz-Expires=300", true), "X-Amz-Signature=[redacted]&X-Amz-Expires=[redacted]");
  });
});

describe("RedactingSpanExporter", () => {
  it("redacts query values in URL attributes only, and secrets everywhere", () => {
    const exported: ReadableSpan[] = [];
    const inner: SpanExporter = {
      export: (spans, done) => {
        exported.push(...spans);
        done({ code: 0 });
      },
      shutdown: async () => undefined,
    };
    const span = {
      attributes: {
        "url.full": "https://hooks.example.com/in?token=abc123",
        "url.query": "X-Amz-Signature=deadbeef",
        "http.target": "/v1/outputs/out_1?exp=1700000000&sig=" + "b".repeat(64),
        "pressroom.note": "a=1&b=2 with pr_live_ABCdef0123456789xyz",
      },
      events: [],
    } as unknown as ReadableSpan;
    new RedactingSpanExporter(inner).export([span], () => undefined);
    assert.deepEqual(exported[0]!.attributes, {
      "url.full": "https://hooks.example.com/in?token=[redacted]",
      "url.query": "X-Amz-Signature=[redacted]",
      "http.target": "/v1/outputs/out_1?exp=[redacted]&sig=[redacted]",
      "pressroom.note": "a=1&b=2 with [redacted-key]",
    });
  });
});
