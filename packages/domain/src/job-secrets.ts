import type { KeyObject } from "node:crypto";
import type { jobEventsV1 } from "@pressroom/contracts";
import { seal, unseal } from "@pressroom/platform";
import { retainedDestination } from "./destinations";
import type { JobEvent } from "./jobs";

/**
 * A job's secrets (issue 39 item 8, issue 42): the encryption passwords, the credentials of a url
 * source (url_options, the request's and each part's) and the destination's url and headers. The
 * gateway seals them, right after the request is validated, to render's public key in one value
 * (JobAccepted.sealed_secrets) and empties their clear fields, so the RENDER command, a batch
 * item's stored command and anything copied from them hold them sealed; only render, which holds
 * the private key, opens them when it renders. The purpose names the job, so a sealed value copied
 * into another job's command does not open there.
 */
interface JobSecrets {
  encrypt?: Passwords;
  urlOptions?: jobEventsV1.UrlOptions;
  /** Each merged part's, in order. */
  parts: { encrypt?: Passwords; urlOptions?: jobEventsV1.UrlOptions }[];
  destination?: { url: string; headers: Record<string, string> };
}

type Passwords = Pick<jobEventsV1.Encryption, "userPassword" | "ownerPassword">;

export const jobSecretsPurpose = (jobId: string): string => `render.job-secrets:${jobId}`;

/** The acceptance with its secrets sealed to `recipient` (render's public key) and their clear fields emptied; unchanged when it has none. */
export function sealJobSecrets(recipient: KeyObject, event: JobEvent): JobEvent {
  const accepted = event.accepted;
  if (!accepted) return event;
  const secrets: JobSecrets = {
    encrypt: passwordsOf(accepted.options),
    urlOptions: accepted.urlOptions,
    parts: accepted.documents.map((part) => ({ encrypt: passwordsOf(part.options), urlOptions: part.urlOptions })),
    destination: accepted.destination && { url: accepted.destination.url, headers: accepted.destination.headers },
  };
  const any = secrets.encrypt || secrets.urlOptions || secrets.destination || secrets.parts.some((part) => part.encrypt || part.urlOptions);
  if (!any) return event;
  return {
    ...event,
    accepted: {
      ...accepted,
      options: withoutPasswords(accepted.options),
      urlOptions: undefined,
      documents: accepted.documents.map((part) => ({ ...part, options: withoutPasswords(part.options), urlOptions: undefined })),
      destination: accepted.destination && retainedDestination(accepted.destination),
      sealedSecrets: seal(recipient, JSON.stringify(secrets), jobSecretsPurpose(event.jobId)),
    },
  };
}

/**
 * The acceptance with its sealed secrets opened with `privateKey` (render's) and put back in their
 * fields, `sealedSecrets` emptied; as it is when it has none. Throws when they do not open (another
 * key, another job's, tampered).
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
    destination: accepted.destination && secrets.destination && { ...accepted.destination, ...secrets.destination },
    sealedSecrets: "",
  };
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
