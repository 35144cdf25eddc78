/**
 * Identity: API keys, plans, signup and its throttle, revocation, webhook
 * secrets. One gRPC service (server.ts); account events go to ACCOUNTS.
 */
import { runService, streams } from "@pressroom/platform";
import { loadIdentityConfig } from "./config";
import type { IdentityDb } from "./db";
import type { IdentityDeps } from "./deps";
import { SecretBox } from "./keys/secret-box";
import { createServer } from "./server";

runService({
  name: "identity",
  config: loadIdentityConfig,
  connect: async ({ config, logger, database, nats }): Promise<IdentityDeps> => ({
    db: database<IdentityDb>("identity"),
    js: (await nats({ streams: [streams.ACCOUNTS] })).js,
    logger,
    signupLimitPerHour: config.SIGNUP_LIMIT_PER_HOUR,
    secretBox: new SecretBox(config.WEBHOOK_SECRET_ENCRYPTION_KEY),
  }),
  build: (deps) => ({ grpc: createServer(deps) }),
});
