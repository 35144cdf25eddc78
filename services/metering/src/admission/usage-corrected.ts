import { publishAccountEvent } from "@pressroom/domain";
import type { JetStreamClient } from "nats";

/** Publishes account.usage_corrected on ACCOUNTS: an operator's SetUsage (actor, from, to, period). */
export async function publishUsageCorrected(
  js: JetStreamClient,
  input: { keyId: string; from: number; to: number; actor: string; periodStart: Date },
): Promise<void> {
  await publishAccountEvent(js, "metering", {
    type: "account.usage_corrected",
    keyId: input.keyId,
    actor: input.actor,
    usageCorrected: { periodStart: input.periodStart.toISOString(), fromUsed: String(input.from), toUsed: String(input.to) },
  });
}
