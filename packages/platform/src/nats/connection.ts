import { connect, type NatsConnection } from "nats";
import type { Logger } from "../logger";

/** Connects to NATS and keeps reconnecting forever; logs status changes. */
export async function connectNats(options: { url: string; name: string; logger: Logger }): Promise<NatsConnection> {
  const nc = await connect({
    servers: options.url.split(","),
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    timeout: 10_000,
  });
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "pingTimer") continue;
      options.logger.info({ nats: status.type }, "nats connection status");
    }
  })();
  return nc;
}
