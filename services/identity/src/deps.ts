import type { Logger } from "@pressroom/platform";
import type { Kysely } from "kysely";
import type { JetStreamClient } from "nats";
import type { IdentityDb } from "./db";
import type { SecretBox } from "./keys/secret-box";

/** What identity's gRPC service is built from; main.ts connects it, tests build their own. */
export interface IdentityDeps {
  db: Kysely<IdentityDb>;
  js: JetStreamClient;
  logger: Logger;
  signupLimitPerHour: number;
  /** Seals and opens webhook secrets at rest. */
  secretBox: SecretBox;
}
