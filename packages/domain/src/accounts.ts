import { accountEventsV1 } from "@pressroom/contracts";
import type { JetStreamClient, PubAck } from "nats";
import { newId, publishEvent, subjects } from "@pressroom/platform";

export type AccountEvent = accountEventsV1.AccountEvent;

/**
 * Appends an event to the key's account history (ACCOUNTS stream): the one
 * place its envelope is built, with a fresh id (also the Nats-Msg-Id), the
 * current time and the emitting service.
 */
export function publishAccountEvent(js: JetStreamClient, source: string, event: Omit<AccountEvent, "id" | "time" | "source">): Promise<PubAck> {
  const full = accountEventsV1.AccountEvent.fromPartial({ ...event, id: newId("evt"), time: new Date().toISOString(), source });
  return publishEvent(js, {
    subject: subjects.account(full.keyId),
    spanSubject: "pressroom.account.{key_id}.v1",
    msgId: full.id,
    type: full.type,
    data: accountEventsV1.AccountEvent.encode(full).finish(),
  });
}
