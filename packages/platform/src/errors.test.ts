import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { status } from "@grpc/grpc-js";
import { AppError, fromGrpcError, toGrpcError } from "./errors";

describe("AppError across gRPC", () => {
  it("keeps code, message and hint through the gRPC form", () => {
    const original = new AppError("TEMPLATE_NOT_FOUND", 'template "x" does not exist', "List templates.");
    const wire = toGrpcError(original);
    assert.equal(wire.code, status.NOT_FOUND);
    const back = fromGrpcError(wire);
    assert.deepEqual([back.code, back.message, back.hint, back.httpStatus], ["TEMPLATE_NOT_FOUND", 'template "x" does not exist', "List templates.", 404]);
  });

  it("carries the retry-after of a 429 across gRPC", () => {
    const back = fromGrpcError(toGrpcError(new AppError("SIGNUP_THROTTLED", "throttled", "Wait.", { retryAfterSeconds: 1234 })));
    assert.equal(back.details.retryAfterSeconds, 1234);
    assert.equal(fromGrpcError(toGrpcError(new AppError("AUTH_INVALID", "no", "Key."))).details.retryAfterSeconds, undefined);
  });

  it("maps transport failures to UNAVAILABLE and anything else to INTERNAL_ERROR", () => {
    assert.equal(fromGrpcError({ code: status.UNAVAILABLE }).code, "UNAVAILABLE");
    assert.equal(fromGrpcError({ code: status.DEADLINE_EXCEEDED }).code, "UNAVAILABLE");
    assert.equal(fromGrpcError(new Error("boom")).code, "INTERNAL_ERROR");
    assert.equal(toGrpcError(new Error("secret detail")).details, "internal error");
  });
});
