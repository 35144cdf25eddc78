import { identityV1 } from "@pressroom/contracts";
import { AppError, clientBucket, unary } from "@pressroom/platform";
import { DEMO_API_KEY, DEMO_KEY_ID, isPlanId, publishAccountEvent } from "@pressroom/domain";
import type { IdentityDeps } from "../deps";
import { sessionHandlers, sessionKey } from "../sessions/sessions.grpc";
import * as keys from "./keys.repository";
import { isWellFormedKey } from "./secrets";

const EMAIL = /^[^\s@"<>()[\]\\,;:]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

const authInvalid = () =>
  new AppError("AUTH_INVALID", "API key missing, malformed or revoked", "Send Authorization: Bearer <API_KEY> with a valid key; sign up at POST /v1/signup.");

function toRecord(row: keys.KeyRow): identityV1.KeyRecord {
  return { keyId: row.keyId, email: row.email ?? "", plan: row.plan, revoked: row.revoked, createdAt: row.createdAt.toISOString() };
}

function validPlan(plan: string): string {
  if (!isPlanId(plan)) {
    throw new AppError("PLAN_INVALID", `unknown plan "${plan}"`, "Use one of demo, free, starter, pro, business.");
  }
  return plan;
}

async function resolveKey(deps: IdentityDeps, ref: { apiKey: string; keyId: string }): Promise<keys.KeyRow> {
  const row = ref.keyId ? await keys.findById(deps.db, ref.keyId) : isWellFormedKey(ref.apiKey) ? await keys.findByApiKey(deps.db, ref.apiKey) : undefined;
  if (!row) throw new AppError("NOT_FOUND", "no such key", "Check the key or key id.");
  return row;
}

/** The key an API key stands for, unless it is unknown or revoked. */
async function authenticKey(deps: IdentityDeps, apiKey: string): Promise<keys.KeyRow> {
  if (!isWellFormedKey(apiKey)) throw authInvalid();
  const row = await keys.findByApiKey(deps.db, apiKey);
  if (!row || row.revoked) throw authInvalid();
  return row;
}

/** The key of a request that names its holder: the API key itself, or a console session of it. */
function holderKey(deps: IdentityDeps, req: { apiKey: string; sessionToken: string }): Promise<keys.KeyRow> {
  return req.sessionToken ? sessionKey(deps, req.sessionToken) : authenticKey(deps, req.apiKey);
}

async function webhookSecrets(deps: IdentityDeps, keyId: string): Promise<identityV1.GetWebhookSecretResponse> {
  const secrets = await keys.getWebhookSecrets(deps.db, deps.secretBox, keyId);
  if (!secrets) throw new AppError("NOT_FOUND", "no such key", "Check the key id.");
  return {
    secret: secrets.secret,
    previousSecret: secrets.previous?.secret ?? "",
    previousExpiresAt: secrets.previous?.expiresAt.toISOString() ?? "",
    olderSecrets: secrets.older.map((old) => old.secret),
  };
}

export function identityService(deps: IdentityDeps): identityV1.IdentityServiceServer {
  const { logger } = deps;
  return {
    authenticate: unary(async (req: identityV1.AuthenticateRequest) => ({ key: toRecord(await authenticKey(deps, req.apiKey)) }), logger),

    signup: unary(async (req: identityV1.SignupRequest) => {
      const email = req.email.trim();
      if (email.length > 254 || !EMAIL.test(email)) {
        throw new AppError("PAYLOAD_INVALID", "email: not a valid e-mail address", 'Send {"email": "you@example.com"}.');
      }
      const attempt = await keys.takeSignupAttempt(deps.db, clientBucket(req.clientIp), deps.signupLimitPerHour);
      if (!attempt.allowed) {
        throw new AppError(
          "SIGNUP_THROTTLED",
          `too many signups from this address (at most ${deps.signupLimitPerHour} an hour)`,
          `Retry after ${attempt.retryAfterSeconds} s (Retry-After); one key per person is enough.`,
          { retryAfterSeconds: attempt.retryAfterSeconds },
        );
      }
      try {
        const created = await keys.createKey(deps.db, deps.secretBox, { email, plan: "free" });
        await publishAccountEvent(deps.js, "identity", {
          type: "account.plan_changed",
          keyId: created.key.keyId,
          actor: "signup",
          planChanged: { fromPlan: "", toPlan: "free" },
        });
        return { apiKey: created.apiKey, key: toRecord(created.key) };
      } catch (err) {
        if (err instanceof keys.EmailExistsError) {
          throw new AppError(
            "AUTH_EMAIL_EXISTS",
            "this e-mail address already has a key",
            "Use the key you were given at signup, or contact support to recover it.",
          );
        }
        throw err;
      }
    }, logger),

    createKey: unary(async (req: identityV1.CreateKeyRequest) => {
      const plan = validPlan(req.plan || "free");
      try {
        const created = await keys.createKey(deps.db, deps.secretBox, { email: req.email.trim() || null, plan });
        await publishAccountEvent(deps.js, "identity", {
          type: "account.plan_changed",
          keyId: created.key.keyId,
          actor: "operator",
          planChanged: { fromPlan: "", toPlan: plan },
        });
        return { apiKey: created.apiKey, key: toRecord(created.key) };
      } catch (err) {
        if (err instanceof keys.EmailExistsError) {
          throw new AppError("AUTH_EMAIL_EXISTS", "this e-mail address already has a key", "Revoke the old key or use another address.");
        }
        throw err;
      }
    }, logger),

    revokeKey: unary(async (req: identityV1.RevokeKeyRequest) => {
      const row = await resolveKey(deps, req);
      if (row.keyId === DEMO_KEY_ID || req.apiKey === DEMO_API_KEY) {
        throw new AppError("PAYLOAD_INVALID", "the public demo key cannot be revoked", "Revoke customer keys only.");
      }
      const revoked = await keys.revokeKey(deps.db, row.keyId);
      if (!revoked) throw new AppError("NOT_FOUND", "no such key", "Check the key or key id.");
      await publishAccountEvent(deps.js, "identity", { type: "account.key_revoked", keyId: row.keyId, actor: "operator", keyRevoked: {} });
      return { key: toRecord(revoked) };
    }, logger),

    setPlan: unary(async (req: identityV1.SetPlanRequest) => {
      const plan = validPlan(req.plan);
      const row = await resolveKey(deps, req);
      const result = await keys.setPlan(deps.db, row.keyId, plan);
      if (!result) throw new AppError("NOT_FOUND", "no such key", "Check the key or key id.");
      if (result.previousPlan !== plan) {
        await publishAccountEvent(deps.js, "identity", {
          type: "account.plan_changed",
          keyId: row.keyId,
          actor: req.actor || "operator",
          planChanged: { fromPlan: result.previousPlan, toPlan: plan },
        });
      }
      return { key: toRecord(result.key), previousPlan: result.previousPlan };
    }, logger),

    getKey: unary(async (req: identityV1.GetKeyRequest) => ({ key: toRecord(await resolveKey(deps, req)) }), logger),

    getWebhookSecret: unary(async (req: identityV1.GetWebhookSecretRequest) => webhookSecrets(deps, req.keyId), logger),

    getOwnWebhookSecret: unary(async (req: identityV1.GetOwnWebhookSecretRequest) => {
      const { secret } = await webhookSecrets(deps, (await holderKey(deps, req)).keyId);
      return { secret };
    }, logger),

    rotateWebhookSecret: unary(async (req: identityV1.RotateWebhookSecretRequest) => {
      const { keyId } = await holderKey(deps, req);
      // Anyone holds the public demo key: a rotation would take its callbacks' secret from everyone else.
      if (keyId === DEMO_KEY_ID) {
        throw new AppError(
          "DEMO_KEY_READ_ONLY",
          "the public demo key's webhook secret cannot be rotated",
          "The demo key is shared by everyone; sign up (POST /v1/signup) for a key of your own to rotate its secret.",
        );
      }
      const rotated = await keys.rotateWebhookSecret(deps.db, deps.secretBox, keyId);
      if (!rotated) throw new AppError("NOT_FOUND", "no such key", "Check the key id.");
      const previousExpiresAt = rotated.previous!.expiresAt.toISOString();
      await publishAccountEvent(deps.js, "identity", {
        type: "account.webhook_secret_rotated",
        keyId,
        actor: "customer",
        webhookSecretRotated: { previousExpiresAt },
      });
      return { secret: rotated.secret, previousExpiresAt };
    }, logger),

    rotateKey: unary(async (req: identityV1.RotateKeyRequest) => {
      const { keyId } = await holderKey(deps, req);
      // Everyone holds the public demo key: a rotation would take it from all the others.
      if (keyId === DEMO_KEY_ID) {
        throw new AppError(
          "DEMO_KEY_READ_ONLY",
          "the public demo key cannot be rotated",
          "The demo key is shared by everyone; sign up (POST /v1/signup) for a key of your own to rotate it.",
        );
      }
      const rotated = await keys.rotateApiKey(deps.db, keyId);
      if (!rotated) throw authInvalid();
      const previousExpiresAt = rotated.previousExpiresAt.toISOString();
      await publishAccountEvent(deps.js, "identity", { type: "account.key_rotated", keyId, actor: "customer", keyRotated: { previousExpiresAt } });
      return { apiKey: rotated.apiKey, previousKeyExpiresAt: previousExpiresAt };
    }, logger),

    ...sessionHandlers(deps, (apiKey) => authenticKey(deps, apiKey), toRecord),
  };
}
