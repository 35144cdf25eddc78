import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { jobEventsV1 } from "@pressroom/contracts";
import { isWrongLastSequence, publishEvent, subjects } from "@pressroom/platform";
import { appendJobEvent, jobEvent, retainedAcceptance, sealJobSecrets, type JobEvent, type SealingRecipients } from "@pressroom/domain";
import type { JetStreamClient, JetStreamManager, NatsConnection } from "nats";
import type { JobPart, JobRequest } from "./request";

export interface JobBus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/**
 * Pauses between the tries of a publish. A publish that timed out may still
 * have been stored: its message id makes the retry a duplicate that JetStream
 * acknowledges without storing it twice (within the streams' 2-minute window).
 * All tries (each bounded by the JetStream client's 5 s timeout) end well
 * within SUBMIT_GIVE_UP_MS, after which workers drop a late-stored command.
 */
const PUBLISH_RETRY_DELAYS_MS = [250, 1_000, 2_000];

async function withRetries<T>(publish: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await publish();
    } catch (err) {
      const delay = PUBLISH_RETRY_DELAYS_MS[attempt];
      if (delay === undefined || isWrongLastSequence(err)) throw err;
      await sleep(delay);
    }
  }
}

/**
 * Makes a job durable: the render command goes to the RENDER work queue, then
 * job.accepted is appended to the job's subject, each publish retried (see
 * PUBLISH_RETRY_DELAYS_MS). Rejects only when the command could not be
 * stored. Once it is, the job is accepted: the command carries the
 * acceptance, so if its append fails (or the gateway dies before it) the
 * worker appends it. Only the command holds the html and data; the JOBS
 * stream gets their digests and sizes (retainedAcceptance). The command
 * names the inbox where the outcome is to be announced (OutcomeInbox).
 */
export async function submitJob(bus: JobBus, input: JobSubmission): Promise<JobEvent> {
  const command = renderCommandOf(input);
  await withRetries(() =>
    publishEvent(bus.js, {
      subject: subjects.renderRequested,
      spanSubject: subjects.renderRequested,
      msgId: input.jobId,
      type: "render.requested",
      data: jobEventsV1.RenderCommand.encode(command).finish(),
    }),
  );
  // Wrong last sequence: a worker that took the command first appended this same acceptance.
  await appendAcceptance(bus, command.accepted!).catch(() => undefined);
  return command.accepted!;
}

export interface JobSubmission {
  /** The public sealing keys the job's secrets are sealed to: render's, and the webhook service's for the destination. */
  sealTo: SealingRecipients;
  jobId: string;
  keyId: string;
  plan: string;
  request: JobRequest;
  templateGeneration: number;
  templateVersion: number;
  templateOwner: string;
  outcomeInbox: string;
}

/** Appends a job's acceptance to its subject (only the digests of its html and data), retried. */
export function appendAcceptance(bus: JobBus, accepted: JobEvent): Promise<unknown> {
  return withRetries(() => appendJobEvent(bus.js, "gateway", retainedAcceptance(accepted), 0));
}

/**
 * The render command of a job: its acceptance (the request's html and data included, its secrets
 * sealed to render and its destination to the webhook service: sealJobSecrets), and where its outcome is announced.
 */
export function renderCommandOf(input: JobSubmission): jobEventsV1.RenderCommand {
  const clear = jobEvent("job.accepted", {
    jobId: input.jobId,
    keyId: input.keyId,
    source: "gateway",
    accepted: {
      // A screenshot is an image job whose source is its html or url.
      kind: input.request.kind === "render" ? jobEventsV1.JobKind.JOB_KIND_RENDER : jobEventsV1.JobKind.JOB_KIND_IMAGE,
      templateId: input.request.templateId ?? "",
      templateVersion: input.templateVersion,
      html: input.request.html ?? "",
      dataJson: input.request.dataJson,
      webhookUrl: input.request.webhookUrl ?? "",
      plan: input.plan,
      htmlSha256: input.request.html === undefined ? "" : sha256(input.request.html),
      htmlBytes: input.request.html === undefined ? 0 : Buffer.byteLength(input.request.html, "utf8"),
      dataSha256: sha256(input.request.dataJson),
      dataBytes: Buffer.byteLength(input.request.dataJson, "utf8"),
      url: input.request.url ?? "",
      urlOptions: input.request.urlOptions,
      documents: (input.request.documents ?? []).map(documentPart),
      options: input.request.options,
      templateOwner: input.templateOwner,
      templateGeneration: input.templateGeneration,
      destination: input.request.destination,
      test: input.request.test === true,
    },
  });
  const accepted = sealJobSecrets(input.sealTo, clear);
  return { jobId: input.jobId, keyId: input.keyId, accepted, outcomeInbox: input.outcomeInbox, cancelled: false };
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** A merged document's part as the job contract carries it (its html and data only in the RENDER command, like a request's). */
function documentPart(part: JobPart): jobEventsV1.DocumentPart {
  return {
    templateId: part.templateId ?? "",
    templateVersion: part.templateVersion ?? 0,
    html: part.html ?? "",
    url: part.url ?? "",
    urlOptions: part.urlOptions,
    dataJson: part.dataJson,
    options: part.options,
    templateOwner: part.templateOwner ?? "",
    htmlSha256: part.html === undefined ? "" : sha256(part.html),
    htmlBytes: part.html === undefined ? 0 : Buffer.byteLength(part.html, "utf8"),
    dataSha256: sha256(part.dataJson),
    dataBytes: Buffer.byteLength(part.dataJson, "utf8"),
    templateGeneration: part.templateGeneration ?? 0,
  };
}
