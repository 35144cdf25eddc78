import type { KeyObject } from "node:crypto";
import type { jobEventsV1 } from "@pressroom/contracts";
import { seal, unseal } from "@pressroom/platform";
import { retainedDestination } from "./destinations";
import type { JobEvent } from "./jobs";

/**
 * A job's secrets (issue 39 item 8, issue 42), each sealed by the gateway, right after the request
 * is validated, to the one service that uses it, and their clear fields emptied, so the RENDER
 * command, a batch item's stored command, the DESTINATIONS message and anything copied from them
 * hold them sealed:
 * - what render renders with (the encryption passwords, the credentials of a url source: the
 *   request's and each part's url_options), in one value to render's public key
 *   (JobAccepted.sealed_secrets), which only render opens;
 * - the destination's url and headers, to the webhook service's public key
 *   (JobAccepted.sealed_destination): render passes it on unopened in the DESTINATIONS message,
 *   and only the webhook service, which PUTs the output, opens it. The destination's host stays in clear.
 * Each purpose names the job, so a sealed value copied into another job does not open there.
 */
interface JobSecrets {
  encrypt?: Passwords;
  urlOptions?: jobEventsV1.UrlOptions;
  /** Each merged part's, in order. */
  parts: { encrypt?: Passwords; urlOptions?: jobEventsV1.UrlOptions }[];
}

/** A destination's credentials, as the webhook service opens them. */
export interface DestinationSecrets {
  url: string;
  headers: Record<string, string>;
}

/** The public keys a job's secrets are sealed to: render's, and the webhook service's (the destination). */
export interface SealingRecipients {
  render: KeyObject;
  webhook: KeyObject;
}

type Passwords = Pick<jobEventsV1.Encryption, "userPassword" | "ownerPassword">;

export const jobSecretsPurpose = (jobId: string): string => `render.job-secrets:${jobId}`;
export const destinationPurpose = (jobId: string): string => `webhook.destination:${jobId}`;

/** The acceptance with its secrets sealed to their `recipients` and their clear fields emptied (the destination's host kept); unchanged when it has none. */
export function sealJobSecrets(recipients: SealingRecipients, event: JobEvent): JobEvent {
  const accepted = event.accepted;
  if (!accepted) return event;
  const secrets: JobSecrets = {
    encrypt: passwordsOf(accepted.options),
    urlOptions: accepted.urlOptions,
    parts: accepted.documents.map((part) => ({ encrypt: passwordsOf(part.options), urlOptions: part.urlOptions })),
  };
  const forRender = Boolean(secrets.encrypt || secrets.urlOptions || secrets.parts.some((part) => part.encrypt || part.urlOptions));
  const destination = accepted.destination;
  if (!forRender && !destination) return event;
  const credentials: DestinationSecrets | undefined = destination && { url: destination.url, headers: destination.headers };
  return {
    ...event,
    accepted: {
      ...accepted,
      options: withoutPasswords(accepted.options),
      urlOptions: undefined,
      documents: accepted.documents.map((part) => ({ ...part, options: withoutPasswords(part.options), urlOptions: undefined })),
      destination: destination && retainedDestination(destination),
      sealedSecrets: forRender ? seal(recipients.render, JSON.stringify(secrets), jobSecretsPurpose(event.jobId)) : "",
      sealedDestination: credentials ? seal(recipients.webhook, JSON.stringify(credentials), destinationPurpose(event.jobId)) : "",
    },
  };
}

/**
 * The acceptance with its sealed secrets opened with `privateKey` (render's) and put back in their
 * fields, `sealedSecrets` emptied; as it is when it has none. The sealed destination stays as it
 * is: render cannot open it. Throws when they do not open (another key, another job's, tampered).
 */
export function openJobSecrets(privateKey: KeyObject, event: JobEvent): jobEventsV1.JobAccepted | undefined {
  const accepted = event.accepted;
  if (!accepted?.sealedSecrets) return accepted;
  const secrets = JSON.parse(unseal(privateKey, accepted.sealedSecrets, jobSecretsPurpose(event.jobId))) as JobSecrets;
  return {
    ...accepted,
    options: withPasswords(accepted.options, secrets.encrypt),
    urlOptions: secrets.urlOptions,
    documents: accepted.documents.map((part, i) => ({
      ...part,
      options: withPasswords(part.options, secrets.parts[i]?.encrypt),
      urlOptions: secrets.parts[i]?.urlOptions,
    })),
    sealedSecrets: "",
  };
}

/**
 * Job `jobId`'s destination url and headers, opened from `sealed` (JobAccepted.sealed_destination,
 * as the DESTINATIONS message carries it) with `privateKey` (the webhook service's). Throws when
 * it does not open (empty, another key, another job's, tampered) or is not a destination.
 */
export function openDestination(privateKey: KeyObject, jobId: string, sealed: string): DestinationSecrets {
  const opened = JSON.parse(unseal(privateKey, sealed, destinationPurpose(jobId))) as Partial<DestinationSecrets>;
  if (typeof opened.url !== "string" || typeof opened.headers !== "object" || opened.headers === null)
    throw new Error("a sealed value that is not a destination");
  return { url: opened.url, headers: opened.headers };
}

function passwordsOf(options: jobEventsV1.RenderOptions | undefined): Passwords | undefined {
  return options?.encrypt && { userPassword: options.encrypt.userPassword, ownerPassword: options.encrypt.ownerPassword };
}

/** The options without an encryption's passwords (as the JOBS stream keeps them, and as they travel once sealed). */
export function withoutPasswords(options: jobEventsV1.RenderOptions | undefined): jobEventsV1.RenderOptions | undefined {
  if (!options?.encrypt) return options;
  return { ...options, encrypt: { ...options.encrypt, userPassword: undefined, ownerPassword: "" } };
}

function withPasswords(options: jobEventsV1.RenderOptions | undefined, passwords: Passwords | undefined): jobEventsV1.RenderOptions | undefined {
  if (!options?.encrypt || !passwords) return options;
  return { ...options, encrypt: { ...options.encrypt, ...passwords } };
}
