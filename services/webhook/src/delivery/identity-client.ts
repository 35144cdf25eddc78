import type { identityV1 } from "@pressroom/contracts";
import { AppError, call } from "@pressroom/platform";
import type { SecretSource } from "./delivery.consumer";

/** The SecretSource delivery uses: identity's GetWebhookSecret, over its gRPC client. */
export function identitySecrets(identity: identityV1.IdentityServiceClient): SecretSource {
  return {
    async get(keyId) {
      try {
        const { secret, previousSecret, olderSecrets } = await call(identity, identity.getWebhookSecret, { keyId });
        if (!secret) return undefined;
        return [secret, ...(previousSecret ? [previousSecret] : []), ...olderSecrets];
      } catch (err) {
        if (err instanceof AppError && err.code === "NOT_FOUND") return undefined;
        throw err;
      }
    },
  };
}
