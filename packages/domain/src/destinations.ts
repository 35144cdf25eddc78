import type { jobEventsV1 } from "@pressroom/contracts";
import { outboundUrlProblem } from "./webhook-url";

/**
 * A job's destination: the customer's presigned URL its output is PUT to
 * (by the webhook service, through the network guard, on the callbacks'
 * retry schedule) before the job succeeds. Its url and headers are
 * credentials: the gateway seals them to the webhook service's key
 * (job-secrets.ts, sealJobSecrets), and they travel sealed in the RENDER
 * command, a batch item's command in metering until it is dispatched and
 * the DESTINATIONS work queue's message; only the webhook service opens
 * them, to PUT. The JOBS stream and the job show the host.
 */

/** The longest destination url accepted, in characters (presigned URLs with a session token run long). */
export const MAX_DESTINATION_URL_LENGTH = 8_192;
export const MAX_DESTINATION_HEADERS = 20;
export const MAX_DESTINATION_HEADER_VALUE_LENGTH = 4_096;

/** Header names a request may not set: the PUT's own framing and target. */
export const RESERVED_DESTINATION_HEADERS = [
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "proxy-authorization",
  "proxy-connection",
] as const;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A destination url's problem, as the API states it ("destination.url: ..."). */
export function destinationUrlProblem(value: unknown): string | undefined {
  return outboundUrlProblem(value, "destination.url", MAX_DESTINATION_URL_LENGTH);
}

/** A destination's headers' problem, naming the header ("destination.headers.<name>: ..."), or undefined. */
export function destinationHeadersProblem(headers: Record<string, unknown>): string | undefined {
  const names = Object.keys(headers);
  if (names.length > MAX_DESTINATION_HEADERS) return `destination.headers: must have at most ${MAX_DESTINATION_HEADERS} headers`;
  const seen = new Set<string>();
  for (const name of names) {
    const field = `destination.headers.${name}`;
    if (!TOKEN.test(name)) return `${field}: not a valid header name`;
    const lower = name.toLowerCase();
    if ((RESERVED_DESTINATION_HEADERS as readonly string[]).includes(lower)) return `${field}: set by Pressroom, not by the request`;
    if (seen.has(lower)) return `${field}: given twice (header names are case-insensitive)`;
    seen.add(lower);
    const value = headers[name];
    if (typeof value !== "string") return `${field}: must be a string`;
    if (value.length > MAX_DESTINATION_HEADER_VALUE_LENGTH) return `${field}: must be at most ${MAX_DESTINATION_HEADER_VALUE_LENGTH} characters`;
    if (/[\0\r\n]/.test(value)) return `${field}: must not contain line breaks`;
  }
  return undefined;
}

/** The destination as the JOBS stream keeps it: its host only. */
export function retainedDestination(destination: jobEventsV1.Destination): jobEventsV1.Destination {
  return { url: "", headers: {}, host: destination.host };
}

/** What the fold knows of a job's destination. */
export interface DestinationState {
  host: string;
  state: "pending" | "delivered" | "exhausted";
  /** The output made and stored (job.rendered), waiting for the destination to accept it. */
  rendered?: jobEventsV1.JobSucceeded;
  renderedAt?: string;
  attempts: number;
  lastStatus?: number;
  /** Why the last attempt failed; never the URL's path or query. */
  lastError?: string;
  nextAttemptAt?: string;
  /** Why delivery stopped (exhausted). */
  reason?: string;
}

export function newDestinationState(destination: jobEventsV1.Destination): DestinationState {
  return { host: destination.host, state: "pending", attempts: 0 };
}

type Folded = { destination?: DestinationState };

/** Folds one destination event (job.rendered, job.destination_*) into the job; false when it does not apply (ignored). */
export function applyDestinationEvent(job: Folded, event: jobEventsV1.JobEvent): boolean {
  const destination = job.destination;
  if (!destination) return false;
  if (event.type === "job.rendered") {
    if (destination.rendered || !event.rendered) return false;
    destination.rendered = event.rendered;
    destination.renderedAt = event.time;
    return true;
  }
  if (!destination.rendered || destination.state !== "pending") return false;
  if (event.destinationAttempted) {
    const attempt = event.destinationAttempted;
    destination.attempts = Math.max(destination.attempts, attempt.attempt);
    destination.lastStatus = attempt.status;
    destination.lastError = attempt.error || undefined;
    destination.nextAttemptAt = attempt.nextAttemptAt || undefined;
    return true;
  }
  if (event.destinationDelivered) {
    destination.state = "delivered";
    destination.lastStatus = event.destinationDelivered.status;
    destination.lastError = undefined;
    destination.nextAttemptAt = undefined;
    return true;
  }
  if (event.destinationExhausted) {
    destination.state = "exhausted";
    destination.nextAttemptAt = undefined;
    destination.reason = event.destinationExhausted.reason;
    return true;
  }
  return false;
}
