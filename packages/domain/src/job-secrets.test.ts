import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { isSealed } from "@pressroom/platform";
import { openJobSecrets, sealJobSecrets } from "./job-secrets";
import { jobEvent, retainedAcceptance } from "./jobs";

const pair = () => generateKeyPairSync("ec", { namedCurve: "prime256v1" });

const urlOptions = {
  headers: { "X-Token": "header-secret-3" },
  cookies: [{ name: "session", value: "cookie-secret-4", path: "/app" }],
  basicAuth: { username: "user-secret-5", password: "basic-secret-6" },
  userAgent: "agent-secret-7",
};
const encrypt = { userPassword: "user-secret-1", ownerPassword: "owner-secret-2", permissions: { print: true, copy: false, modify: false, annotate: false } };
const SECRETS = /secret-|destination-token|sig=/;

const acceptance = (jobId = "job_0000000000aaaaaaaaaaaaaaaa") =>
  jobEvent("job.accepted", {
    jobId,
    keyId: "key_demo",
    source: "gateway",
    accepted: jobEventsV1.JobAccepted.fromPartial({
      html: "<p>{{name}}</p>",
      dataJson: '{"name":"Ada"}',
      options: { encrypt, metadata: { title: "Kept" } },
      url: "https://example.com/a",
      urlOptions,
      documents: [
        { html: "<p>part</p>", options: { encrypt: { ownerPassword: "owner-secret-8" } } },
        { url: "https://example.com/b", urlOptions },
      ],
      destination: { url: "https://bucket.example.com/out.pdf?sig=destination-token", headers: { "x-ms-blob-type": "BlockBlob" }, host: "bucket.example.com" },
    }),
  });

describe("a job's sealed secrets (issue 39 item 8, issue 42)", () => {
  it("travel sealed to render's key, their clear fields empty, the destination's host kept", () => {
    const event = acceptance();
    const sealed = sealJobSecrets(pair().publicKey, event);
    const encoded = Buffer.from(jobEventsV1.JobEvent.encode(sealed).finish()).toString("latin1");
    assert.doesNotMatch(encoded, SECRETS);
    assert.doesNotMatch(encoded, /BlockBlob/);
    const accepted = sealed.accepted!;
    assert.ok(isSealed(accepted.sealedSecrets));
    assert.equal(accepted.urlOptions, undefined);
    assert.equal(accepted.documents[1]!.urlOptions, undefined);
    assert.deepEqual(accepted.options?.encrypt, { userPassword: undefined, ownerPassword: "", permissions: encrypt.permissions });
    assert.deepEqual(accepted.destination, { url: "", headers: {}, host: "bucket.example.com" });
    assert.equal(accepted.options?.metadata?.title, "Kept", "the rest of the request travels as it was");
    assert.equal(accepted.html, "<p>{{name}}</p>");
  });

  it("open with render's private key to the acceptance the gateway sealed", () => {
    const { publicKey, privateKey } = pair();
    const event = acceptance();
    const opened = openJobSecrets(privateKey, jobEventsV1.JobEvent.decode(jobEventsV1.JobEvent.encode(sealJobSecrets(publicKey, event)).finish()));
    assert.deepEqual(opened, jobEventsV1.JobAccepted.fromPartial(event.accepted!));
  });

  it("open with no other key, nor in another job's command", () => {
    const { publicKey, privateKey } = pair();
    const sealed = sealJobSecrets(publicKey, acceptance());
    assert.throws(() => openJobSecrets(pair().privateKey, sealed));
    const moved = { ...acceptance("job_0000000000bbbbbbbbbbbbbbbb"), accepted: sealed.accepted };
    assert.throws(() => openJobSecrets(privateKey, moved));
  });

  it("leave an acceptance without secrets as it is, and the JOBS stream keeps none of them, sealed or not", () => {
    const { publicKey, privateKey } = pair();
    const plain = jobEvent("job.accepted", { jobId: "job_0000000000aaaaaaaaaaaaaaaa", keyId: "key_demo", source: "gateway", accepted: { html: "<p>x</p>" } });
    assert.equal(sealJobSecrets(publicKey, plain), plain);
    assert.equal(openJobSecrets(privateKey, plain), plain.accepted);
    assert.equal(retainedAcceptance(sealJobSecrets(publicKey, acceptance())).accepted!.sealedSecrets, "");
  });
});
