import type { Bus, Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { Config } from "./config";
import type { WebhookDb } from "./db";
import type { SecretSource } from "./delivery/delivery.consumer";
import type { Poster } from "./delivery/http";
import type { OutputReader } from "./destinations/output-reader";

/** What the webhook service's consumers are built from; main.ts connects it. */
export interface WebhookDeps {
  config: Readonly<Config>;
  db: Kysely<WebhookDb>;
  bus: Bus;
  logger: Logger;
  poster: Poster;
  secrets: SecretSource;
  /** Where a destination's output is read: storage. */
  outputs: OutputReader;
}
