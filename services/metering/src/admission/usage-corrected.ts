import { accountEventsV1 } from "@pressroom/contracts";
import { newId, publishEvent, subjects } from "@pressroom/platform";
import type { JetStreamClient } from "nats";

/** Publishes account.usage_corrected on ACCOUNTS: an operator's SetUsage (actor, from, to, period). */
export async function publishUsageCorrected(
  js: JetStreamClient,
  input: { keyId: string; from: number; to: number; actor: string; periodStart: Date },
): Promise<void> {
  const event = accountEventsV1.AccountEvent.fromPartial({
    id: newId("evt"),
    type: "account.usage_corrected",
    time: new Date().toISOString(),
    source: "metering",
    keyId: input.keyId,
    actor: input.actor,
    usageCorrected: { periodStart: input.periodStart.toISOString(), fromUsed: String(input.from), toUsed: String(input.to) },
  });
  await publishEvent(js, {
    subject: subjects.account(input.keyId),
    spanSubject: "pressroom.account.{key_id}.v1",
    msgId: event.id,
    type: event.type,
    data: accountEventsV1.AccountEvent.encode(event).finish(),
  });
}
