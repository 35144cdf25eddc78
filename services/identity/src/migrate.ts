import { loadConfig, runMigrateEntrypoint, z } from "@pressroom/platform";
import { DEMO_API_KEY } from "@pressroom/domain";
import { configSchema } from "./config";
import type { IdentityDb } from "./db";
import { ensureDemoKey, sealPlaintextSecrets } from "./keys/keys.repository";
import { SecretBox } from "./keys/secret-box";
import { migrations } from "./migrations";

/**
 * Identity's one-off step: the migrations, then the public demo key, and the
 * sealing of webhook secrets an earlier version stored in plaintext. Both
 * need the key that seals webhook secrets, the one the service gets.
 */
void runMigrateEntrypoint<IdentityDb>("identity", migrations, async (db, logger) => {
  const { WEBHOOK_SECRET_ENCRYPTION_KEY } = loadConfig(z.object({ WEBHOOK_SECRET_ENCRYPTION_KEY: configSchema.shape.WEBHOOK_SECRET_ENCRYPTION_KEY }));
  const box = new SecretBox(WEBHOOK_SECRET_ENCRYPTION_KEY);
  await ensureDemoKey(db, box, DEMO_API_KEY);
  const sealed = await sealPlaintextSecrets(db, box);
  if (sealed > 0) logger.info({ sealed }, "sealed plaintext webhook secrets left by an earlier version");
});
