import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { webhookAddressProblem } from "./webhook-address";

/**
 * A webhook_url the delivery would refuse is refused with the request (issue 44 item 9), as far as it can be known then:
 * a non-public IP literal, or a name that resolves to one (here localhost, through /etc/hosts).
 */
describe("a webhook_url's address at the request", () => {
  it("refuses private, loopback, link-local and metadata literals and a name resolving to loopback, naming webhook_url and the address", async () => {
    const cases: [string, RegExp][] = [
      ["https://10.1.2.3/hook", /^webhook_url: host "10\.1\.2\.3" is a private address; /],
      ["https://192.168.0.10/hook", /^webhook_url: host "192\.168\.0\.10" is a private address; /],
      ["https://127.0.0.1/hook", /^webhook_url: host "127\.0\.0\.1" is a loopback address; /],
      ["https://[::1]/hook", /^webhook_url: host "\[::1\]" is a loopback address; /],
      ["https://169.254.169.254/latest", /^webhook_url: host "169\.254\.169\.254" is a cloud metadata address; /],
      ["https://169.254.10.10/hook", /^webhook_url: host "169\.254\.10\.10" is a link-local address; /],
      ["https://localhost/hook", /^webhook_url: host "localhost" resolves to a loopback address \((127\.0\.0\.1|::1)\); /],
    ];
    for (const [url, message] of cases) {
      const problem = await webhookAddressProblem(url, false);
      assert.equal(problem?.code, "PAYLOAD_INVALID", url);
      assert.match(problem.message, message);
      assert.match(problem.message, /webhooks are delivered to public addresses only$/);
      assert.match(problem.hint, /webhooks:listen/);
    }
  });

  it("with the loopback allowance (development and tests), accepts loopback and still refuses private addresses", async () => {
    assert.equal(await webhookAddressProblem("https://127.0.0.1/hook", true), undefined);
    assert.equal(await webhookAddressProblem("https://localhost/hook", true), undefined);
    assert.match((await webhookAddressProblem("https://10.0.0.1/hook", true))?.message ?? "", /private address/);
  });

  it("accepts a public literal, and a name that does not resolve now (the delivery checks again and records why it failed)", async () => {
    assert.equal(await webhookAddressProblem("https://93.184.215.14/hook", false), undefined);
    assert.equal(await webhookAddressProblem("https://hooks.pressroom-test.invalid/hook", false), undefined);
  });
});
