import { jobEventsV1 } from "@pressroom/contracts";
import type { JetStreamClient, JetStreamManager, PubAck } from "nats";
import { applyDestinationEvent, newDestinationState, retainedDestination, type DestinationState } from "./destinations";
import { withoutPasswords } from "./job-secrets";
import {
  directGet,
  JOB_WRITERS,
  newId,
  publishEvent,
  streams,
  subjects,
  type DirectQuery,
  type EventSpec,
  type JobWriter,
  type Logger,
} from "@pressroom/platform";

export type JobEvent = jobEventsV1.JobEvent;
export type JobEventType =
  | "job.accepted"
  | "job.started"
  | "job.rendered"
  | "job.succeeded"
  | "job.failed"
  | "job.webhook_attempted"
  | "job.webhook_delivered"
  | "job.webhook_exhausted"
  | "job.webhook_replay_requested"
  | "job.destination_attempted"
  | "job.destination_delivered"
  | "job.destination_exhausted";

export type JobStatus = "queued" | "rendering" | "succeeded" | "failed";

export interface StoredJobEvent {
  seq: number;
  event: JobEvent;
  /** The writer token of the subject it was stored under. */
  writer: string;
}

/**
 * Who may write each event. NATS permissions keep every component to its own
 * writer token, and the fold and the consumers ignore an event stored under
 * a writer that may not write it: only render can make a job succeed. The
 * acceptance is the gateway's, or render's when it restores one the gateway
 * could not append (it carries the gateway's own event, from the command).
 */
const WRITERS: Record<JobEventType, readonly JobWriter[]> = {
  "job.accepted": ["gateway", "render"],
  "job.started": ["render"],
  "job.rendered": ["render"],
  "job.succeeded": ["render"],
  "job.failed": ["render"],
  "job.webhook_attempted": ["webhook"],
  "job.webhook_delivered": ["webhook"],
  "job.webhook_exhausted": ["webhook"],
  "job.webhook_replay_requested": ["webhook"],
  "job.destination_attempted": ["webhook"],
  "job.destination_delivered": ["webhook"],
  "job.destination_exhausted": ["webhook"],
};

/** Whether the event was stored under a writer that may write it. */
export function isAuthentic(stored: Pick<StoredJobEvent, "event" | "writer">): boolean {
  return (WRITERS[stored.event.type as JobEventType] as readonly string[] | undefined)?.includes(stored.writer) ?? false;
}

/** A job event as JetStream delivered or returned it (the payload may throw on decoding). */
export function storedJobEvent(msg: { seq: number; subject: string; data: Uint8Array }): StoredJobEvent {
  return { seq: msg.seq, event: jobEventsV1.JobEvent.decode(msg.data), writer: msg.subject.split(".")[3] ?? "" };
}

export interface JobState {
  id: string;
  keyId: string;
  status: JobStatus;
  kind: "render" | "image";
  templateId: string;
  /** The template version the job renders (0: raw html). */
  templateVersion: number;
  /** Test mode: stamped TEST, counted against the key's daily test allowance. */
  test: boolean;
  webhookUrl: string;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  attempts: number;
  result?: jobEventsV1.JobSucceeded;
  error?: jobEventsV1.JobFailed;
  /** The job's destination (absent: none): where its output is PUT before it succeeds. */
  destination?: DestinationState;
  webhook: {
    /** The callback's retry schedule: its state, last status and next attempt (replays leave them alone). */
    state: "none" | "pending" | "delivered" | "exhausted";
    /** The highest attempt number so far: the schedule's and replays' (requested ones too) share one numbering. */
    attempts: number;
    /** How many attempts the schedule made, and the number of its last one. */
    scheduledAttempts: number;
    lastScheduledAttempt: number;
    lastStatus?: number;
    /** Why the last scheduled attempt failed (TLS, DNS, a refused address, a refused connection, a timeout, an HTTP status); never a secret or the URL. */
    lastError?: string;
    nextAttemptAt?: string;
    /** Replays asked for (job.webhook_replay_requested), each one attempt, in order. */
    replays: WebhookReplay[];
  };
  /** Per writer, the stream sequence of its last event (0: none): what its next append expects. */
  lastSeqOf: Record<JobWriter, number>;
  history: { id: string; type: string; time: string; source: string; destinationAttempt?: jobEventsV1.DestinationAttempted }[];
}

export interface WebhookReplay {
  /** The request's event id. */
  id: string;
  attempt: number;
  /** The delivery replayed. */
  replayOf: string;
  /** Whether its attempt was made (job.webhook_attempted with replay). */
  attempted: boolean;
}

/**
 * The number of the schedule's next attempt: 1 for its first (which a replay
 * never takes), then one more than any attempt so far.
 */
export function nextScheduledAttempt(job: Pick<JobState, "webhook">): number {
  return job.webhook.scheduledAttempts === 0 ? 1 : job.webhook.attempts + 1;
}

/** The number of a replay's attempt: after every attempt so far, and never 1, which is the schedule's first. */
export function nextReplayAttempt(job: Pick<JobState, "webhook">): number {
  return Math.max(job.webhook.attempts, 1) + 1;
}

/** A succeeded job's output as its announcement carried it (see announceOutcome). */
export interface AnnouncedOutput {
  filename: string;
  data: Uint8Array;
  /** Downloads answer Content-Disposition: attachment (the request named the file). */
  attachment: boolean;
}

/** What a caller waiting for a job needs of its end; `output` only when the announcement carried it. */
export type JobOutcome = Pick<JobState, "id" | "status" | "result" | "error"> & { output?: AnnouncedOutput };

export function isTerminal(status: JobStatus): boolean {
  return status === "succeeded" || status === "failed";
}

/** Builds an event with a fresh id and the current time. */
export function jobEvent(
  type: JobEventType,
  fields: { jobId: string; keyId: string; source: string } & jobEventsV1.DeepPartial<Omit<JobEvent, "id" | "type" | "time" | "source" | "jobId" | "keyId">>,
): JobEvent {
  const { jobId, keyId, source, ...data } = fields;
  return jobEventsV1.JobEvent.fromPartial({ id: newId("evt"), type, time: new Date().toISOString(), source, jobId, keyId, ...data });
}

/**
 * The acceptance as the JOBS stream keeps it: without the request's html and
 * data (often personal data, and the stream keeps events for 90 days), which
 * only the RENDER command carries, nor an encryption's passwords, nor a url
 * source's credentials (url_options), nor a destination's url and headers (its host stays); the SHA-256 and size of
 * html and data stay, for every merged part too. Same event id.
 */
export function retainedAcceptance(event: JobEvent): JobEvent {
  if (!event.accepted) return event;
  const { accepted } = event;
  return {
    ...event,
    accepted: {
      ...accepted,
      html: "",
      dataJson: "",
      documents: accepted.documents.map((part) => ({ ...part, html: "", dataJson: "", options: withoutPasswords(part.options), urlOptions: undefined })),
      options: withoutPasswords(accepted.options),
      urlOptions: undefined,
      destination: accepted.destination && retainedDestination(accepted.destination),
      // Sealed, they are of no use to the readers of the JOBS stream either.
      sealedSecrets: "",
      sealedDestination: "",
    },
  };
}

/**
 * The job's state is the fold of its events. Events that an append guard
 * would have refused (anything but webhook bookkeeping after a terminal
 * event) are ignored, so a corrupt history can never resurrect a job; so are
 * events stored under a writer that may not write them.
 */
export function foldJob(events: StoredJobEvent[]): JobState | undefined {
  let state: JobState | undefined;
  const lastSeqOf = Object.fromEntries(JOB_WRITERS.map((writer) => [writer, 0])) as Record<JobWriter, number>;
  for (const stored of events) {
    const { seq, event, writer } = stored;
    if ((JOB_WRITERS as readonly string[]).includes(writer)) lastSeqOf[writer as JobWriter] = seq;
    if (!isAuthentic(stored)) continue;
    if (event.type === "job.accepted" && event.accepted) {
      if (state) continue;
      state = {
        id: event.jobId,
        keyId: event.keyId,
        status: "queued",
        kind: event.accepted.kind === jobEventsV1.JobKind.JOB_KIND_IMAGE ? "image" : "render",
        templateId: event.accepted.templateId,
        templateVersion: event.accepted.templateVersion,
        test: event.accepted.test,
        webhookUrl: event.accepted.webhookUrl,
        createdAt: event.time,
        attempts: 0,
        webhook: { state: event.accepted.webhookUrl ? "pending" : "none", attempts: 0, scheduledAttempts: 0, lastScheduledAttempt: 0, replays: [] },
        ...(event.accepted.destination ? { destination: newDestinationState(event.accepted.destination) } : {}),
        lastSeqOf,
        history: [],
      };
    }
    if (!state) continue;
    const terminal = isTerminal(state.status);
    switch (event.type) {
      case "job.started":
        if (terminal) continue;
        state.status = "rendering";
        state.startedAt ??= event.time;
        state.attempts = Math.max(state.attempts, event.started?.attempt ?? state.attempts + 1);
        break;
      case "job.succeeded":
        if (terminal) continue;
        state.status = "succeeded";
        state.finishedAt = event.time;
        state.result = event.succeeded;
        break;
      case "job.failed":
        if (terminal) continue;
        state.status = "failed";
        state.finishedAt = event.time;
        state.error = event.failed;
        break;
      case "job.rendered":
      case "job.destination_attempted":
      case "job.destination_delivered":
      case "job.destination_exhausted":
        if (terminal || !applyDestinationEvent(state, event)) continue;
        break;
      case "job.webhook_attempted": {
        const attempt = event.webhookAttempted?.attempt ?? 0;
        state.webhook.attempts = Math.max(state.webhook.attempts, attempt);
        if (event.webhookAttempted?.replay) {
          const replay = state.webhook.replays.find((r) => r.attempt === attempt);
          if (replay) replay.attempted = true;
          break;
        }
        state.webhook.scheduledAttempts++;
        state.webhook.lastScheduledAttempt = attempt;
        state.webhook.lastStatus = event.webhookAttempted?.status;
        state.webhook.lastError = event.webhookAttempted?.error || undefined;
        state.webhook.nextAttemptAt = event.webhookAttempted?.nextAttemptAt || undefined;
        break;
      }
      case "job.webhook_replay_requested": {
        const attempt = event.webhookReplayRequested?.attempt ?? 0;
        state.webhook.attempts = Math.max(state.webhook.attempts, attempt);
        state.webhook.replays.push({ id: event.id, attempt, replayOf: event.webhookReplayRequested?.replayOf ?? "", attempted: false });
        break;
      }
      case "job.webhook_delivered":
        state.webhook.state = "delivered";
        state.webhook.attempts = Math.max(state.webhook.attempts, event.webhookDelivered?.attempt ?? 0);
        state.webhook.lastStatus = event.webhookDelivered?.status;
        state.webhook.lastError = undefined;
        state.webhook.nextAttemptAt = undefined;
        break;
      case "job.webhook_exhausted":
        state.webhook.state = "exhausted";
        state.webhook.nextAttemptAt = undefined;
        break;
    }
    state.history.push({
      id: event.id,
      type: event.type,
      time: event.time,
      source: event.source,
      ...(event.destinationAttempted ? { destinationAttempt: event.destinationAttempted } : {}),
    });
  }
  return state;
}

/** The span name of job events: their subject without ids. */
export const JOB_SPAN_SUBJECT = "pressroom.job.{id}.{writer}.v1";

/**
 * How a consumer of JOBS reads job events: the `types` it acts on, and only
 * those stored under a writer that may write them (any other is logged and
 * skipped).
 */
export function jobEventSpec(logger: Logger, types?: readonly JobEventType[]): EventSpec<StoredJobEvent> {
  return {
    spanSubject: JOB_SPAN_SUBJECT,
    logger,
    decode: storedJobEvent,
    attributes: ({ event }) => ({ "pressroom.job.id": event.jobId, "pressroom.event.type": event.type }),
    wanted: (stored) => {
      if (!isAuthentic(stored)) {
        logger.warn(
          { jobId: stored.event.jobId, type: stored.event.type, writer: stored.writer, seq: stored.seq },
          "job event stored under a writer that may not write it; ignored",
        );
        return false;
      }
      return !types || types.includes(stored.event.type as JobEventType);
    },
  };
}

/** One event of a job by direct get, or undefined when there is none. */
async function getJobEvent(jsm: JetStreamManager, query: DirectQuery): Promise<StoredJobEvent | undefined> {
  const msg = await directGet(jsm, streams.JOBS, query);
  return msg && storedJobEvent(msg);
}

/** Reads every event of one job, in order, by direct get on the job's subjects. */
export async function readJobEvents(jsm: JetStreamManager, jobId: string): Promise<StoredJobEvent[]> {
  const subject = subjects.jobEvents(jobId);
  const events: StoredJobEvent[] = [];
  for (
    let next = await getJobEvent(jsm, { seq: 1, next_by_subj: subject });
    next;
    next = await getJobEvent(jsm, { seq: next.seq + 1, next_by_subj: subject })
  ) {
    events.push(next);
  }
  return events;
}

/** The first event of one job (its acceptance, in any history a fold accepts): one direct get. */
export function readFirstJobEvent(jsm: JetStreamManager, jobId: string): Promise<StoredJobEvent | undefined> {
  return getJobEvent(jsm, { seq: 1, next_by_subj: subjects.jobEvents(jobId) });
}

/** The last event of one job, whoever wrote it: one direct get. */
export function readLastJobEvent(jsm: JetStreamManager, jobId: string): Promise<StoredJobEvent | undefined> {
  return getJobEvent(jsm, { last_by_subj: subjects.jobEvents(jobId) });
}

export async function loadJob(jsm: JetStreamManager, jobId: string): Promise<JobState | undefined> {
  return foldJob(await readJobEvents(jsm, jobId));
}

/**
 * Appends an event under the job's subject of its writer. With
 * expectLastSeq, the append only succeeds if that writer appended nothing
 * else to the job since (optimistic concurrency).
 */
export function appendJobEvent(js: JetStreamClient, writer: JobWriter, event: JobEvent, expectLastSeq?: number): Promise<PubAck> {
  if (!isAuthentic({ event, writer })) return Promise.reject(new Error(`${writer} does not write ${event.type} events`));
  return publishEvent(js, {
    subject: subjects.job(event.jobId, writer),
    spanSubject: JOB_SPAN_SUBJECT,
    msgId: event.id,
    type: event.type,
    data: jobEventsV1.JobEvent.encode(event).finish(),
    expectLastSubjectSequence: expectLastSeq,
  });
}
