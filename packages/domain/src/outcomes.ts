import { jobEventsV1 } from "@pressroom/contracts";
import { subjects } from "@pressroom/platform";
import type { NatsConnection } from "nats";
import type { JobEvent, JobOutcome, AnnouncedOutput } from "./jobs";

/** Where a command's outcome is announced: its gateway's inbox, or, for a command that names none, the job's own subject. */
export function outcomeInboxOf(command: Pick<jobEventsV1.RenderCommand, "jobId" | "outcomeInbox">): string {
  return command.outcomeInbox || command.jobId;
}

/**
 * Tells the gateway that waits for the job (answering a sync request) how it
 * ended, on its `inbox` (outcomeInboxOf), with the output's bytes when given
 * (a succeeded job whose caller waits for it, see the render worker). Call it
 * only after JetStream acknowledged the terminal event's append: the
 * announcement is then a fact, and the waiter need not re-read the history.
 * Core NATS, at most once: a waiter that misses it falls back to the history.
 */
export function announceOutcome(nc: NatsConnection, inbox: string, event: JobEvent, output?: AnnouncedOutput): void {
  const announced = output && {
    filename: output.filename,
    data: Buffer.from(output.data.buffer, output.data.byteOffset, output.data.byteLength),
    attachment: output.attachment,
  };
  nc.publish(subjects.outcomes(inbox), jobEventsV1.JobOutcomeAnnouncement.encode({ event, output: announced }).finish());
}

/** The outcome an announcement carries, if it carries a terminal event. */
export function announcedOutcome(data: Uint8Array): JobOutcome | undefined {
  const { event, output } = jobEventsV1.JobOutcomeAnnouncement.decode(data);
  if (!event?.jobId) return undefined;
  if (event.type === "job.succeeded" && event.succeeded) {
    // A copy of its own: the decoded bytes are a view of the message, which the caller may keep.
    return {
      id: event.jobId,
      status: "succeeded",
      result: event.succeeded,
      ...(output ? { output: { filename: output.filename, data: new Uint8Array(output.data), attachment: output.attachment } } : {}),
    };
  }
  if (event.type === "job.failed" && event.failed) return { id: event.jobId, status: "failed", error: event.failed };
  return undefined;
}
