import { createHash } from "node:crypto";
import { meteringV1 } from "@pressroom/contracts";
import { AppError, call, errorBody, type Logger } from "@pressroom/platform";
import type { Context } from "koa";
import { errors, toAppError } from "../errors";
import type { Principal } from "./auth";

/**
 * Idempotency-Key (as Stripe does it) for POST /v1/render, /v1/image and
 * /v1/billing/checkout. Metering holds the records (Postgres, 24 h), checked
 * and written in the same atomic decision as the admission, so the same key
 * sent to any number of gateways at once is admitted once:
 *
 * - a new key is admitted as usual; the request's response is recorded
 *   (a 5xx forgets the key instead, so that a retry runs again);
 * - the same key and request again replays the first response with
 *   `Idempotent-Replayed: true`, taking no quota; while the first is still
 *   running, a job's replay is answered from the job itself (waited on when
 *   sync, 202 when async) and a checkout's waits for the recorded response;
 * - the same key with another request is 422 IDEMPOTENCY_KEY_REUSED.
 */

export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/** How long a checkout replay waits for the first request's response. */
const CHECKOUT_REPLAY_WAIT_MS = 20_000;
const CHECKOUT_REPLAY_POLL_MS = 100;

/** JSON with every object's keys sorted: the same text for the same value, whatever the order and spacing it was sent with. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The request's Idempotency-Key with the digest of the request (method, path
 * and body as JSON: key order and spacing do not matter), or undefined without
 * the header; a malformed key is a PAYLOAD_INVALID to answer after the rate limit.
 */
export function idempotencyOf(ctx: Context, body: Record<string, unknown>): meteringV1.Idempotency | AppError | undefined {
  const header = ctx.headers["idempotency-key"];
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header.join(", ") : header;
  if (!IDEMPOTENCY_KEY.test(key)) {
    return errors.payload(
      "Idempotency-Key: must be 1 to 255 visible ASCII characters",
      "Send a unique value per operation, e.g. a UUID, and the same value when retrying it.",
    );
  }
  const requestDigest = createHash("sha256")
    .update(`${ctx.method} ${ctx.path}\n${canonicalJson(body)}`)
    .digest("hex");
  return { key, requestDigest };
}

export function throwIfKeyReused(decision: meteringV1.AdmitResponse): void {
  if (decision.decision === meteringV1.Decision.DECISION_IDEMPOTENCY_KEY_REUSED) {
    throw new AppError(
      "IDEMPOTENCY_KEY_REUSED",
      "this Idempotency-Key was already used with a different request",
      "Use a new Idempotency-Key for a new request; retry a request only with exactly the body it was first sent with.",
    );
  }
}

/** The record to replay, when metering says this request is a replay. */
export function replayOf(decision: meteringV1.AdmitResponse): meteringV1.IdempotentRecord | undefined {
  return decision.decision === meteringV1.Decision.DECISION_IDEMPOTENT_REPLAY ? (decision.replay ?? { jobId: "", status: 0, bodyJson: "" }) : undefined;
}

/** Answers with a recorded response. */
export function sendRecorded(ctx: Context, record: meteringV1.IdempotentRecord): void {
  markReplayed(ctx);
  ctx.status = record.status;
  const body = JSON.parse(record.bodyJson) as { id?: string };
  if (record.status === 202 && body.id) ctx.set("Location", `/v1/jobs/${body.id}`);
  ctx.body = body;
}

export function markReplayed(ctx: Context): void {
  ctx.set("Idempotent-Replayed", "true");
  ctx.set("Cache-Control", "no-store");
}

/** Where responses are recorded, and where a failure to record one is logged. */
export interface RecordDeps {
  metering: meteringV1.MeteringServiceClient;
  logger: Logger;
}

/**
 * Runs the handler of a request admitted with a new Idempotency-Key and
 * records its response (or forgets the key after a 5xx). `respond` says
 * whether its answer is final: a sync job still running after the wait is
 * answered 202 but not recorded, so its replays follow the job.
 */
export async function recordResponse(
  deps: RecordDeps,
  ctx: Context,
  principal: Principal,
  key: string,
  respond: () => Promise<{ final: boolean }>,
): Promise<void> {
  const { metering } = deps;
  const complete = (status: number, body: unknown) =>
    call(metering, metering.completeIdempotentRequest, { keyId: principal.keyId, idempotencyKey: key, status, bodyJson: JSON.stringify(body) }).catch(
      (err: unknown) => {
        deps.logger.warn({ err }, "could not record the response of an Idempotency-Key; its replays follow the job");
      },
    );
  // A document answered in place of the JSON (Accept) is recorded as the JSON it stands for.
  const recorded = () => (ctx.state as { recordedBody?: unknown }).recordedBody;
  let final: boolean;
  try {
    ({ final } = await respond());
  } catch (err) {
    const appError = toAppError(err, deps.logger, ctx);
    // The job succeeded even if its document could not be sent: a replay answers that.
    if (recorded() !== undefined) await complete(200, recorded());
    else await complete(appError.httpStatus, errorBody(appError));
    throw appError;
  }
  if (final) await complete(ctx.status, recorded() ?? ctx.body);
}

/** A checkout replay while the first request runs: waits for its recorded response. */
export async function awaitRecorded(
  deps: { metering: meteringV1.MeteringServiceClient },
  principal: Principal,
  key: string,
  record: meteringV1.IdempotentRecord,
): Promise<meteringV1.IdempotentRecord> {
  const deadline = Date.now() + CHECKOUT_REPLAY_WAIT_MS;
  let current: meteringV1.IdempotentRecord | undefined = record;
  while (current && current.status === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, CHECKOUT_REPLAY_POLL_MS));
    ({ record: current } = await call(deps.metering, deps.metering.getIdempotentRequest, { keyId: principal.keyId, idempotencyKey: key }));
  }
  if (!current || current.status === 0) {
    throw new AppError("INTERNAL_ERROR", "the first request with this Idempotency-Key did not complete", "Retry with the same Idempotency-Key and body.");
  }
  return current;
}
