import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, it } from "node:test";
import { jobEventsV1 } from "@pressroom/contracts";
import { isSealed } from "@pressroom/platform";
import { openDestination, openJobSecrets, sealJobSecrets } from "./job-secrets";
import { jobEvent, retainedAcceptance } from "./jobs";

const pair = () => generateKeyPairSync("ec", { namedCurve: "prime256v1" });
/** Render's key pair and the webhook service's, and the public keys the gateway seals to. */
const pairs = () => {
  const render = pair();
  const webhook = pair();
  return { render, webhook, to: { render: render.publicKey, webhook: webhook.publicKey } };
};
const JOB_A = "job_0000000000aaaaaaaaaaaaaaaa";
const DESTINATION = { url: "https://bucket.example.com/out.pdf?sig=destination-token", headers: { "x-ms-blob-type": "BlockBlob" } };

const urlOptions = {
  headers: { "X-Token": "header-secret-3" },
  cookies: [{ name: "session", value: "cookie-secret-4", path: "/app" }],
  basicAuth: { username: "user-secret-5", password: "basic-secret-6" },
  userAgent: "agent-secret-7",
};
const encrypt = { userPassword: "user-secret-1", ownerPassword: "owner-secret-2", permissions: { print: true, copy: false, modify: false, annotate: false } };
const SECRETS = /secret-|destination-token|sig=/;

const acceptance = (jobId = JOB_A) =>
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
      destination: { ...DESTINATION, host: "bucket.example.com" },
    }),
  });

describe("a job's sealed secrets (issue 39 item 8, issue 42)", () => {
  it("travel sealed, render's to render's key and the destination's to the webhook's, their clear fields empty, the destination's host kept", () => {
    const event = acceptance();
    const sealed = sealJobSecrets(pairs().to, event);
    const encoded = Buffer.from(jobEventsV1.JobEvent.encode(sealed).finish()).toString("latin1");
    assert.doesNotMatch(encoded, SECRETS);
    assert.doesNotMatch(encoded, /BlockBlob/);
    const accepted = sealed.accepted!;
    assert.ok(isSealed(accepted.sealedSecrets));
    assert.ok(isSealed(accepted.sealedDestination));
    assert.equal(accepted.urlOptions, undefined);
    assert.equal(accepted.documents[1]!.urlOptions, undefined);
    assert.deepEqual(accepted.options?.encrypt, { userPassword: undefined, ownerPassword: "", permissions: encrypt.permissions });
    assert.deepEqual(accepted.destination, { url: "", headers: {}, host: "bucket.example.com" });
    assert.equal(accepted.options?.metadata?.title, "Kept", "the rest of the request travels as it was");
    assert.equal(accepted.html, "<p>{{name}}</p>");
  });

  it("open with render's private key to the acceptance the gateway sealed, but for the destination, which render cannot open", () => {
    const { render, to } = pairs();
    const event = acceptance();
    const sealed = jobEventsV1.JobEvent.decode(jobEventsV1.JobEvent.encode(sealJobSecrets(to, event)).finish());
    const opened = openJobSecrets(render.privateKey, sealed);
    assert.deepEqual(
      opened,
      jobEventsV1.JobAccepted.fromPartial({
        ...event.accepted!,
        destination: { host: "bucket.example.com" },
        sealedDestination: sealed.accepted!.sealedDestination,
      }),
    );
    assert.throws(() => openDestination(render.privateKey, JOB_A, sealed.accepted!.sealedDestination), "render's key does not open the destination");
  });

  it("the destination opens with the webhook's private key, for its own job only; the webhook's key opens nothing of render's", () => {
    const { render, webhook, to } = pairs();
    const sealed = sealJobSecrets(to, acceptance());
    assert.deepEqual(openDestination(webhook.privateKey, JOB_A, sealed.accepted!.sealedDestination), DESTINATION);
    assert.throws(() => openDestination(webhook.privateKey, "job_0000000000bbbbbbbbbbbbbbbb", sealed.accepted!.sealedDestination), "not in another job");
    assert.throws(() => openDestination(pair().privateKey, JOB_A, sealed.accepted!.sealedDestination), "nor with another key");
    assert.throws(() => openDestination(webhook.privateKey, JOB_A, ""), "nor when it is missing");
    assert.throws(() => openDestination(webhook.privateKey, JOB_A, sealed.accepted!.sealedSecrets), "render's secrets are not a destination");
    assert.throws(() => openJobSecrets(webhook.privateKey, sealed), "nor does the webhook's key open render's secrets");
    assert.throws(() => openJobSecrets(render.privateKey, { ...sealed, accepted: { ...sealed.accepted!, sealedSecrets: sealed.accepted!.sealedDestination } }));
  });

  it("seal a destination alone to the webhook only, and render's secrets alone to render only", () => {
    const { to } = pairs();
    const destinationOnly = jobEvent("job.accepted", {
      jobId: JOB_A,
      keyId: "key_demo",
      source: "gateway",
      accepted: { html: "<p>x</p>", destination: { ...DESTINATION, host: "bucket.example.com" } },
    });
    const sealed = sealJobSecrets(to, destinationOnly).accepted!;
    assert.equal(sealed.sealedSecrets, "");
    assert.ok(isSealed(sealed.sealedDestination));
    const renderOnly = sealJobSecrets(to, { ...acceptance(), accepted: { ...acceptance().accepted!, destination: undefined } }).accepted!;
    assert.ok(isSealed(renderOnly.sealedSecrets));
    assert.equal(renderOnly.sealedDestination, "");
  });

  it("open with no other key, nor in another job's command", () => {
    const { render, to } = pairs();
    const sealed = sealJobSecrets(to, acceptance());
    assert.throws(() => openJobSecrets(pair().privateKey, sealed));
    const moved = { ...acceptance("job_0000000000bbbbbbbbbbbbbbbb"), accepted: sealed.accepted };
    assert.throws(() => openJobSecrets(render.privateKey, moved));
  });

  it("leave an acceptance without secrets as it is, and the JOBS stream keeps none of them, sealed or not", () => {
    const { render, to } = pairs();
    const plain = jobEvent("job.accepted", { jobId: JOB_A, keyId: "key_demo", source: "gateway", accepted: { html: "<p>x</p>" } });
    assert.equal(sealJobSecrets(to, plain), plain);
    assert.equal(openJobSecrets(render.privateKey, plain), plain.accepted);
    const retained = retainedAcceptance(sealJobSecrets(to, acceptance())).accepted!;
    assert.equal(retained.sealedSecrets, "");
    assert.equal(retained.sealedDestination, "");
  });
});
