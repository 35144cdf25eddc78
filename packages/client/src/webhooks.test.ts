import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import {
  DEFAULT_TOLERANCE_SECONDS,
  PressroomSignatureError,
  constructEvent,
  signWebhookPayload,
  verifyWebhookSignature,
  type VerifyOptions,
  type WebhookEvent,
} from "./index";

const SECRET = "whsec_test_3f9c2a7d1e5b4c8a";
const NOW_S = 1_767_225_600; // 2026-01-01T00:00:00Z
const now = () => NOW_S * 1000 + 250; // mid-second, to exercise the flooring
const BODY = JSON.stringify({
  id: "evt_01",
  type: "job.succeeded",
  created_at: "2026-01-01T00:00:00.000Z",
  job_id: "job_01",
  status: "succeeded",
  url: "https://pressroom.example/v1/outputs/out_1?exp=1&sig=ab",
  expires_at: "2026-01-02T00:00:00.000Z",
  error: null,
});

function hmacHex(secret: string, t: string | number, body: string | Uint8Array): string {
  return createHmac("sha256", secret).update(`${t}.`).update(body).digest("hex");
}

const validHeader = (t = NOW_S, body: string | Uint8Array = BODY, secret = SECRET) => signWebhookPayload(body, secret, t);
const verify = (header: string | undefined | null, body: string | Uint8Array = BODY, options = {}) =>
  verifyWebhookSignature(body, header, SECRET, { now, ...options });

describe("signWebhookPayload", () => {
  it("produces t=<unix>,v1=<HMAC-SHA256(secret, t.body) hex>", () => {
    const header = signWebhookPayload(BODY, SECRET, NOW_S);
    assert.equal(header, `t=${NOW_S},v1=${hmacHex(SECRET, NOW_S, BODY)}`);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it("signs a string and its UTF-8 bytes identically", () => {
    const body = '{"name":"Zoë — 日本"}';
    assert.equal(signWebhookPayload(body, SECRET, NOW_S), signWebhookPayload(new TextEncoder().encode(body), SECRET, NOW_S));
  });

  it("refuses a non-integer or negative timestamp and an empty secret", () => {
    assert.throws(() => signWebhookPayload(BODY, SECRET, 1.5), TypeError);
    assert.throws(() => signWebhookPayload(BODY, SECRET, -1), TypeError);
    assert.throws(() => signWebhookPayload(BODY, SECRET, Number.NaN), TypeError);
    assert.throws(() => signWebhookPayload(BODY, "", NOW_S), TypeError);
  });
});

describe("verifyWebhookSignature: accepts", () => {
  it("a fresh, correctly signed body", () => {
    assert.equal(verify(validHeader()), true);
  });

  it("with the default clock and default tolerance of 300 s", () => {
    assert.equal(DEFAULT_TOLERANCE_SECONDS, 300);
    const t = Math.floor(Date.now() / 1000);
    assert.equal(verifyWebhookSignature(BODY, signWebhookPayload(BODY, SECRET, t), SECRET), true);
  });

  it("a Uint8Array body, including bytes that are not valid UTF-8", () => {
    const bytes = new TextEncoder().encode(BODY);
    assert.equal(verify(validHeader(NOW_S, bytes), bytes), true);
    assert.equal(verify(validHeader(NOW_S, bytes), Buffer.from(bytes)), true);
    const binary = new Uint8Array([0x7b, 0xff, 0xfe, 0x00, 0x80, 0x7d]);
    assert.equal(verify(`t=${NOW_S},v1=${hmacHex(SECRET, NOW_S, binary)}`, binary), true);
    // Decoding those bytes to text would have replaced them: the signature no longer matches.
    assert.equal(verify(`t=${NOW_S},v1=${hmacHex(SECRET, NOW_S, binary)}`, Buffer.from(binary).toString("utf8")), false);
  });

  it("a header with v0/v2 entries around a matching v1 (other schemes are ignored)", () => {
    const v1 = hmacHex(SECRET, NOW_S, BODY);
    assert.equal(verify(`t=${NOW_S},v0=deadbeef,v1=${v1},v2=${"ab".repeat(32)}`), true);
    assert.equal(verify(`v2=not-even-hex,t=${NOW_S},v1=${v1}`), true);
  });

  it("several v1 entries when any one matches (secret rotation)", () => {
    const other = hmacHex("whsec_old", NOW_S, BODY);
    assert.equal(verify(`t=${NOW_S},v1=${other},v1=${hmacHex(SECRET, NOW_S, BODY)}`), true);
    assert.equal(verify(`t=${NOW_S},v1=${hmacHex(SECRET, NOW_S, BODY)},v1=${other}`), true);
  });

  it("optional whitespace after commas and upper-case hex", () => {
    const v1 = hmacHex(SECRET, NOW_S, BODY);
    assert.equal(verify(`t=${NOW_S}, v1=${v1}`), true);
    assert.equal(verify(`t=${NOW_S},v1=${v1.toUpperCase()}`), true);
  });

  it("exactly at the tolerance boundary, past and future", () => {
    assert.equal(verify(validHeader(NOW_S - 300)), true);
    assert.equal(verify(validHeader(NOW_S + 300)), true);
  });
});

describe("verifyWebhookSignature: rejects", () => {
  it("a tampered body", () => {
    const header = validHeader();
    assert.equal(verify(header, BODY.replace("succeeded", "failed")), false);
    assert.equal(verify(header, `${BODY} `), false);
    assert.equal(verify(header, new TextEncoder().encode(BODY.replace("job_01", "job_02"))), false);
  });

  it("a body re-serialized after parsing (verify before parsing)", () => {
    const reserialized = JSON.stringify(JSON.parse(BODY), null, 2);
    assert.notEqual(reserialized, BODY);
    assert.equal(verify(validHeader(), reserialized), false);
  });

  it("a tampered signature", () => {
    const v1 = hmacHex(SECRET, NOW_S, BODY);
    const flipped = (v1[0] === "0" ? "1" : "0") + v1.slice(1);
    assert.equal(verify(`t=${NOW_S},v1=${flipped}`), false);
    assert.equal(verify(`t=${NOW_S},v1=${"0".repeat(64)}`), false);
  });

  it("a tampered timestamp (t is part of the signed string)", () => {
    const v1 = hmacHex(SECRET, NOW_S, BODY);
    assert.equal(verify(`t=${NOW_S - 1},v1=${v1}`), false);
  });

  it("a signature made with another secret", () => {
    assert.equal(verify(validHeader(NOW_S, BODY, "whsec_wrong")), false);
    assert.equal(verifyWebhookSignature(BODY, validHeader(), "whsec_wrong", { now }), false);
  });

  it("a timestamp older than the tolerance", () => {
    assert.equal(verify(validHeader(NOW_S - 301)), false);
    assert.equal(verify(validHeader(NOW_S - 86_400)), false);
    assert.equal(verify(validHeader(0)), false);
  });

  it("a timestamp further in the future than the tolerance", () => {
    assert.equal(verify(validHeader(NOW_S + 301)), false);
    assert.equal(verify(validHeader(NOW_S + 86_400)), false);
  });

  it("honours a custom tolerance, accepting and rejecting", () => {
    assert.equal(verify(validHeader(NOW_S - 500), BODY, { toleranceSeconds: 600 }), true);
    assert.equal(verify(validHeader(NOW_S + 500), BODY, { toleranceSeconds: 600 }), true);
    assert.equal(verify(validHeader(NOW_S - 601), BODY, { toleranceSeconds: 600 }), false);
    assert.equal(verify(validHeader(NOW_S - 10), BODY, { toleranceSeconds: 10 }), true);
    assert.equal(verify(validHeader(NOW_S - 11), BODY, { toleranceSeconds: 10 }), false);
    assert.equal(verify(validHeader(NOW_S + 11), BODY, { toleranceSeconds: 10 }), false);
    assert.equal(verify(validHeader(NOW_S), BODY, { toleranceSeconds: 0 }), true);
    assert.equal(verify(validHeader(NOW_S - 1), BODY, { toleranceSeconds: 0 }), false);
  });

  it("an invalid tolerance or clock (fails closed instead of skipping the check)", () => {
    const header = validHeader(NOW_S - 10_000);
    for (const toleranceSeconds of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
      assert.equal(verify(header, BODY, { toleranceSeconds }), false, String(toleranceSeconds));
    }
    assert.equal(verify(validHeader(), BODY, { now: () => Number.NaN }), false);
  });

  it("a missing or empty header", () => {
    assert.equal(verify(undefined), false);
    assert.equal(verify(null), false);
    assert.equal(verify(""), false);
    assert.equal(verify("   "), false);
  });

  it("malformed headers of several kinds, even around a valid v1", () => {
    const v1 = hmacHex(SECRET, NOW_S, BODY);
    const cases: Record<string, string> = {
      "missing t": `v1=${v1}`,
      "empty t": `t=,v1=${v1}`,
      "non-numeric t": `t=abc,v1=${v1}`,
      "fractional t": `t=${NOW_S}.5,v1=${v1}`,
      "negative t": `t=-${NOW_S},v1=${v1}`,
      "exponent t": `t=1.7e9,v1=${v1}`,
      "t beyond safe integers": `t=99999999999999999999,v1=${v1}`,
      "duplicate t (same value)": `t=${NOW_S},t=${NOW_S},v1=${v1}`,
      "duplicate t (different values)": `t=${NOW_S},v1=${v1},t=${NOW_S - 1}`,
      "no v1": `t=${NOW_S}`,
      "only a v2": `t=${NOW_S},v2=${v1}`,
      "empty v1": `t=${NOW_S},v1=`,
      "non-hex v1": `t=${NOW_S},v1=${"zz".repeat(32)}`,
      "short v1": `t=${NOW_S},v1=${v1.slice(0, 62)}`,
      "odd-length v1": `t=${NOW_S},v1=${v1.slice(0, 63)}`,
      "long v1": `t=${NOW_S},v1=${v1}00`,
      "a malformed v1 beside a valid one": `t=${NOW_S},v1=xyz,v1=${v1}`,
      "entry without =": `t=${NOW_S},v1=${v1},garbage`,
      "empty entry": `t=${NOW_S},,v1=${v1}`,
      "semicolon separators": `t=${NOW_S};v1=${v1}`,
      "upper-case keys": `T=${NOW_S},V1=${v1}`,
      "plain garbage": "not a signature",
    };
    for (const [name, header] of Object.entries(cases)) {
      assert.equal(verify(header), false, name);
    }
  });

  it("never throws, whatever it is given", () => {
    const header = validHeader();
    const loose = verifyWebhookSignature as (...args: unknown[]) => boolean;
    assert.equal(loose(JSON.parse(BODY), header, SECRET, { now }), false, "a parsed object instead of the raw body");
    assert.equal(loose(undefined, header, SECRET, { now }), false);
    assert.equal(loose(BODY, 42, SECRET, { now }), false);
    assert.equal(loose(BODY, [header], SECRET, { now }), false);
    assert.equal(loose(BODY, header, undefined, { now }), false);
    assert.equal(loose(BODY, header, "", { now }), false, "an empty secret fails closed");
    assert.equal(
      loose(BODY, header, SECRET, {
        now: () => {
          throw new Error("clock");
        },
      }),
      false,
    );
  });
});

interface SignatureVector {
  name: string;
  secret: string;
  payload?: string;
  payload_hex?: string;
  header: string;
  now: number;
  tolerance?: number;
  valid: boolean;
}

describe("verifyWebhookSignature: the vectors shared with the Python client", () => {
  const file = path.join(__dirname, "../../../test/vectors/webhook-signatures.json");
  const { vectors } = JSON.parse(readFileSync(file, "utf8")) as { vectors: SignatureVector[] };

  it("has vectors that accept and vectors that reject", () => {
    assert.ok(vectors.filter((v) => v.valid).length >= 10);
    assert.ok(vectors.filter((v) => !v.valid).length >= 30);
  });

  for (const vector of vectors) {
    it(`${vector.valid ? "accepts" : "rejects"} ${vector.name}`, () => {
      const payload = vector.payload_hex === undefined ? vector.payload! : Buffer.from(vector.payload_hex, "hex");
      const options: VerifyOptions = { now: () => vector.now * 1000 };
      if (vector.tolerance !== undefined) options.toleranceSeconds = vector.tolerance;
      assert.equal(verifyWebhookSignature(payload, vector.header, vector.secret, options), vector.valid);
    });
  }
});

describe("verifyWebhookSignature: constant-time comparison", () => {
  it("compares with crypto.timingSafeEqual on equal-length buffers", () => {
    const crypto = createRequire(__filename)("node:crypto") as typeof import("node:crypto");
    const spy = mock.method(crypto, "timingSafeEqual");
    try {
      const v1 = hmacHex(SECRET, NOW_S, BODY);
      const wrong = hmacHex("whsec_other", NOW_S, BODY);
      assert.equal(verify(`t=${NOW_S},v1=${wrong},v1=${v1}`), true);
      assert.equal(spy.mock.callCount(), 2, "every v1 candidate is compared");
      for (const call of spy.mock.calls) {
        const [a, b] = call.arguments as [Buffer, Buffer];
        assert.ok(Buffer.isBuffer(a) && Buffer.isBuffer(b));
        assert.equal(a.length, 32);
        assert.equal(b.length, 32);
      }
      assert.equal(verify(`t=${NOW_S},v1=${wrong}`), false);
      assert.equal(spy.mock.callCount(), 3);
    } finally {
      spy.mock.restore();
    }
  });
});

describe("constructEvent", () => {
  it("returns the parsed event once the signature checks out", () => {
    const event = constructEvent(BODY, validHeader(), SECRET, { now });
    assert.deepEqual(event, JSON.parse(BODY) as WebhookEvent);
    assert.equal(event.type, "job.succeeded");
    const fromBytes = constructEvent<WebhookEvent>(Buffer.from(BODY), validHeader(), SECRET, { now });
    assert.equal(fromBytes.job_id, "job_01");
  });

  it("throws PressroomSignatureError on a bad signature, without parsing the body", () => {
    assert.throws(() => constructEvent(BODY, validHeader(NOW_S - 301), SECRET, { now }), PressroomSignatureError);
    assert.throws(() => constructEvent(BODY, undefined, SECRET, { now }), PressroomSignatureError);
    assert.throws(
      () => constructEvent("{not json", validHeader(NOW_S, BODY), SECRET, { now }),
      (err: unknown) => err instanceof PressroomSignatureError && err.code === "SIGNATURE_INVALID",
    );
  });

  it("throws the parser's error for a correctly signed body that is not JSON", () => {
    assert.throws(() => constructEvent("{not json", validHeader(NOW_S, "{not json"), SECRET, { now }), SyntaxError);
  });
});
