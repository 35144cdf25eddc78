import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NetGuardError } from "./errors";
import { WEB_PORTS, checkPort, portOf } from "./ports";

describe("the ports a guarded request may reach", () => {
  it("reads a URL's port, its scheme's default when it names none", () => {
    assert.equal(portOf(new URL("https://cdn.example.com/a.png")), 443);
    assert.equal(portOf(new URL("http://cdn.example.com/a.png")), 80);
    assert.equal(portOf(new URL("http://cdn.example.com:8443/a.png")), 8443);
  });

  it("allows 80 and 443 by default and refuses any other port with a NetGuardError naming it", () => {
    checkPort(new URL("https://cdn.example.com/"), WEB_PORTS);
    checkPort(new URL("http://cdn.example.com:80/"), WEB_PORTS);
    for (const url of ["http://mail.example.com:25/", "http://cache.example.com:6379/", "https://cdn.example.com:8443/"]) {
      assert.throws(
        () => checkPort(new URL(url), WEB_PORTS, "document sub-request"),
        (err: unknown) =>
          err instanceof NetGuardError &&
          err.kind === "port" &&
          err.message === `document sub-request ${JSON.stringify(new URL(url).hostname)} port ${new URL(url).port} is not allowed (allowed: 80, 443)`,
      );
    }
    checkPort(new URL("https://cdn.example.com:8443/"), [...WEB_PORTS, 8443]);
  });
});
