import { setTimeout as sleep } from "node:timers/promises";
import type { JetStreamManager } from "nats";
import type { Logger } from "../logger";
import { isNotFound, objectStoreStream } from "./topology";

/** How the operator provisions what a service found missing. */
export const PROVISION_HINT =
  "run the provisioning step: node packages/platform/dist/nats/provision-main.js (locally, up.sh does it), or the chart's provision Job";

/**
 * Resolves once every stream, consumer and bucket a service binds to exists.
 * Services never create them (a one-off step does, see provision-main.ts):
 * until then the service stays not ready, checks again every recheckMs, and
 * says once, for each new set of missing pieces, what is missing and how to
 * provision it.
 */
export async function awaitTopology(jsm: JetStreamManager, needs: TopologyNeeds, logger: Logger, recheckMs = 2_000): Promise<void> {
  let reported = "";
  for (;;) {
    let missing: string[];
    try {
      missing = await missingTopology(jsm, needs);
    } catch (err) {
      logger.warn({ err }, "could not check the JetStream topology; checking again");
      await sleep(recheckMs);
      continue;
    }
    if (missing.length === 0) {
      if (reported) logger.info("JetStream topology in place");
      return;
    }
    const line = missing.join(", ");
    if (line !== reported) {
      logger.error({ missing }, `JetStream topology missing: ${line}; ${PROVISION_HINT}`);
      reported = line;
    }
    await sleep(recheckMs);
  }
}

/** The part of the topology one service binds to. */
export interface TopologyNeeds {
  streams?: string[];
  consumers?: { stream: string; name: string }[];
  objectStores?: string[];
}

/** The pieces of `needs` that do not exist, named for a log line; empty when all do. */
export async function missingTopology(jsm: JetStreamManager, needs: TopologyNeeds): Promise<string[]> {
  const missing: string[] = [];
  const check = async (name: string, info: () => Promise<unknown>) => {
    try {
      await info();
    } catch (err) {
      if (!isNotFound(err)) throw err;
      missing.push(name);
    }
  };
  for (const stream of needs.streams ?? []) await check(`stream ${stream}`, () => jsm.streams.info(stream));
  for (const { stream, name } of needs.consumers ?? []) await check(`consumer ${stream}/${name}`, () => jsm.consumers.info(stream, name));
  for (const bucket of needs.objectStores ?? []) await check(`object store ${bucket}`, () => jsm.streams.info(objectStoreStream(bucket)));
  return missing;
}
