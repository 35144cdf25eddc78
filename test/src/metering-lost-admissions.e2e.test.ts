import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { jobEventsV1, meteringV1 } from "@pressroom/contracts";
import { call, newId } from "@pressroom/platform";
import { appendJobEvent, jobEvent } from "@pressroom/domain";
import { waitFor } from "@pressroom/stack";
import { connect, type NatsConnection } from "nats";
import { clientsAs, startHarness, type Harness, type PeerClients } from "./test-support/harness";

const LEASE_SECONDS = 10;

/**
 * A render admitted (its unit taken, its slot held) and then lost before it
 * was submitted (the gateway died between Admit and its publish, or could
 * not reach metering to release it) is refunded when its slot's lease ends,
 * by metering's sweep; a job JetStream knows keeps its charge.
 */
describe("admitted jobs lost before submission", () => {
  let h: Harness;
  let nc: NatsConnection;
  let metering: meteringV1.MeteringServiceClient;
  let gateway: PeerClients;

  before(async () => {
    h = await startHarness({ only: ["metering"], serviceEnv: { metering: { SLOT_LEASE_SECONDS: String(LEASE_SECONDS), SWEEP_INTERVAL_MS: "1000" } } });
    nc = await connect({ servers: h.stack.natsUrl });
    // Admission is the gateway's.
    gateway = clientsAs(h.stack, "gateway");
    metering = gateway.metering;
  });

  after(async () => {
    gateway?.close();
    await nc?.close();
    await h?.stop();
  });

  const admit = (keyId: string, renderJobId: string) =>
    call(metering, metering.admit, meteringV1.AdmitRequest.fromPartial({ keyId, plan: "pro", renderJobId }));
  const usage = async (keyId: string) => (await call(metering, metering.getUsage, { keyId, plan: "pro" })).usage!;

  it("refunds the unit of a job that never reached JetStream once its lease ends, and keeps the charge of one that did", async () => {
    const keyId = newId("key");
    const lost = newId("job");
    const submitted = newId("job");
    assert.equal((await admit(keyId, lost)).decision, meteringV1.Decision.DECISION_ALLOWED);
    assert.equal((await admit(keyId, submitted)).decision, meteringV1.Decision.DECISION_ALLOWED);
    const accepted = jobEvent("job.accepted", {
      jobId: submitted,
      keyId,
      source: "test",
      accepted: jobEventsV1.JobAccepted.fromPartial({ dataJson: "{}", html: "<p>x</p>" }),
    });
    await appendJobEvent(nc.jetstream(), "gateway", accepted, 0);
    assert.deepEqual([(await usage(keyId)).rendersUsed, (await usage(keyId)).inFlight], ["2", 2]);

    await waitFor("the lost job's unit refunded", async () => (await usage(keyId)).rendersUsed === "1", (LEASE_SECONDS + 15) * 1_000);
    const after = await usage(keyId);
    assert.equal(after.rendersUsed, "1", "the submitted job stays charged");
    assert.ok(h.stack.output().includes("refunded an admitted job that was never submitted"));
  });
});
