import { connect, type NatsConnection } from "nats";
import type { Logger } from "../logger";

export interface NatsOptions {
  url: string;
  name: string;
  logger: Logger;
  /** The service's NATS user and password (NATS_USER, NATS_PASSWORD); anonymous without them. */
  user?: string;
  pass?: string;
  /** Reconnection attempts, the first connection's included; forever by default. */
  maxReconnectAttempts?: number;
}

/** Connects to NATS and keeps reconnecting (forever by default); logs status changes. */
export async function connectNats(options: NatsOptions): Promise<NatsConnection> {
  const nc = await connect({
    servers: options.url.split(","),
    name: options.name,
    ...(options.user ? { user: options.user, pass: options.pass } : {}),
    maxReconnectAttempts: options.maxReconnectAttempts ?? -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    timeout: 10_000,
  });
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "pingTimer") continue;
      // An error the server sent (a permissions violation, say) is worth its text.
      if (status.type === "error") options.logger.error({ nats: status.type, err: status.data }, "nats server error");
      else options.logger.info({ nats: status.type }, "nats connection status");
    }
  })();
  return nc;
}
