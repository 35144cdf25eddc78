import { createHmac } from "node:crypto";
import type { JobState } from "@pressroom/domain";

/**
 * The JSON body of a callback (DESIGN.md). `id` is the id of the job's
 * terminal event, so it is the same on every attempt and receivers can
 * deduplicate on it. On success `error` is null; on failure `url` and
 * `expires_at` are null and `error` is {code, message}.
 */
export interface CallbackBody {
  id: string;
  type: "job.succeeded" | "job.failed";
  created_at: string;
  job_id: string;
  status: "succeeded" | "failed";
  url: string | null;
  expires_at: string | null;
  error: { code: string; message: string } | null;
}

export const USER_AGENT = "Pressroom-Webhooks/1.0";

/** The terminal event of a finished job (the fold keeps only the first one). */
export function terminalEventOf(job: JobState): { id: string; type: "job.succeeded" | "job.failed"; time: string } | undefined {
  const event = job.history.find((e) => e.type === "job.succeeded" || e.type === "job.failed");
  return event ? { id: event.id, type: event.type as "job.succeeded" | "job.failed", time: event.time } : undefined;
}

/**
 * The callback body of a finished job, as the exact text that is signed and
 * sent. Built from the job's events only, so every attempt sends the same bytes.
 */
export function callbackBody(job: JobState): { eventId: string; text: string } | undefined {
  const terminal = terminalEventOf(job);
  if (!terminal) return undefined;
  const succeeded = terminal.type === "job.succeeded";
  const body: CallbackBody = {
    id: terminal.id,
    type: terminal.type,
    created_at: terminal.time,
    job_id: job.id,
    status: succeeded ? "succeeded" : "failed",
    url: succeeded ? (job.result?.url ?? null) : null,
    expires_at: succeeded ? job.result?.expiresAt || null : null,
    error: succeeded ? null : { code: job.error?.code || "INTERNAL_ERROR", message: job.error?.message || "the render failed" },
  };
  return { eventId: terminal.id, text: JSON.stringify(body) };
}

/** The Standard Webhooks key: the base64 part of `whsec_<base64>` (either alphabet), decoded. */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  return Buffer.from(encoded, "base64");
}

/**
 * The signature headers of one attempt, signed at `timestampSeconds` with
 * each of the key's secrets in use: the current one, then each one a
 * rotation replaced, for 24 h after that rotation (newest first), so a
 * receiver verifies with any of them, as Stripe does during a secret roll:
 *
 * - `X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, t + "." + body)>[,v1=…]`,
 *   the spec's scheme (the same as @pressroom/client's signWebhookPayload, and
 *   Stripe's `Stripe-Signature` format);
 * - the Standard Webhooks headers: `webhook-id` (the event id),
 *   `webhook-timestamp` (the same t) and `webhook-signature:
 *   v1,<base64 HMAC-SHA256(key, id + "." + t + "." + body)>[ v1,…]` keyed with
 *   the decoded secret.
 */
export function signatureHeaders(input: { eventId: string; body: string; secrets: readonly string[]; timestampSeconds: number }): Record<string, string> {
  const t = String(input.timestampSeconds);
  const v1 = input.secrets.map((secret) => `v1=${createHmac("sha256", secret).update(`${t}.`, "utf8").update(input.body, "utf8").digest("hex")}`);
  const headers: Record<string, string> = { "X-Service-Signature": `t=${t},${v1.join(",")}` };
  const keys = input.secrets.map(standardWebhooksKey).filter((key) => key.length > 0);
  if (keys.length > 0) {
    headers["webhook-id"] = input.eventId;
    headers["webhook-timestamp"] = t;
    headers["webhook-signature"] = keys
      .map((key) => `v1,${createHmac("sha256", key).update(`${input.eventId}.${t}.`, "utf8").update(input.body, "utf8").digest("base64")}`)
      .join(" ");
  }
  return headers;
}
