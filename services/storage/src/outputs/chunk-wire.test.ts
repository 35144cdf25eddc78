import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { storageV1 } from "@pressroom/contracts";
import { serializeGetOutputResponse } from "./chunk-wire";

const generated = (value: storageV1.GetOutputResponse) => Buffer.from(storageV1.GetOutputResponse.encode(value).finish());

describe("GetOutput's response serialiser", () => {
  it("writes a chunk as the generated encoder does, byte for byte, at every length-prefix size", () => {
    for (const size of [0, 1, 127, 128, 16_383, 16_384, 128 * 1024, 2_097_151, 2_097_152]) {
      const value = { chunk: randomBytes(size) };
      const ours = serializeGetOutputResponse(value);
      assert.deepEqual(ours, generated(value), `chunk of ${size} bytes`);
      assert.deepEqual(storageV1.GetOutputResponse.decode(ours).chunk, value.chunk);
    }
  });

  it("leaves the output's info to the generated encoder", () => {
    const value = {
      info: { contentType: "application/pdf", filename: "report.pdf", attachment: true, sizeBytes: "1048576", expiresAt: "2026-11-26T00:00:00.000Z" },
    };
    assert.deepEqual(serializeGetOutputResponse(value), generated(value));
    assert.deepEqual(storageV1.GetOutputResponse.decode(serializeGetOutputResponse(value)).info, value.info);
  });
});
