import { env, grpcServiceShape, loadConfig, z } from "@pressroom/platform";

export const configSchema = z.object({
  ...grpcServiceShape("identity"),
  SIGNUP_LIMIT_PER_HOUR: env.int(5, 1),
  /** Encrypts webhook secrets at rest (AES-256-GCM): 32 random bytes as 64 hex characters, from a secret store. */
  WEBHOOK_SECRET_ENCRYPTION_KEY: z.string().regex(/^[0-9a-fA-F]{64}$/, "must be 32 bytes as 64 hex characters (e.g. openssl rand -hex 32)"),
});

export type Config = z.infer<typeof configSchema>;

export const loadIdentityConfig = (source: NodeJS.ProcessEnv = process.env): Readonly<Config> => loadConfig(configSchema, source);
