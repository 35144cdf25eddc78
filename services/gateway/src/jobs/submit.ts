import { jobEventsV1 } from "@pressroom/contracts";
import {
  appendJobEvent,
  isTerminal,
  isWrongLastSequence,
  jobEvent,
  loadJob,
  publishEvent,
  subjects,
  type JobEvent,
  type JobState,
} from "@pressroom/platform";
import type { JetStreamClient, JetStreamManager, NatsConnection, Subscription } from "nats";
import type { JobRequest } from "../validation";

export interface JobBus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/**
 * Watches a job's subject for its terminal event. Subscribed before the job
 * is published, so the outcome cannot be missed; a periodic read of the
 * job's history covers a reconnect.
 */
export class JobWatch {
  private readonly sub: Subscription;

  constructor(
    private readonly bus: JobBus,
    private readonly jobId: string,
  ) {
    this.sub = bus.nc.subscribe(subjects.job(jobId));
  }

  /** Resolves with the terminal state, or undefined after timeoutMs. */
  async wait(timeoutMs: number): Promise<JobState | undefined> {
    const deadline = Date.now() + timeoutMs;
    const poll = setInterval(() => {
      void loadJob(this.bus.jsm, this.jobId).then((job) => {
        if (job && isTerminal(job.status)) this.sub.unsubscribe();
      }, () => undefined);
    }, 5_000);
    const timer = setTimeout(() => this.sub.unsubscribe(), Math.max(0, deadline - Date.now()));
    try {
      for await (const msg of this.sub) {
        const event = jobEventsV1.JobEvent.decode(msg.data);
        if (event.type === "job.succeeded" || event.type === "job.failed") break;
      }
    } finally {
      clearInterval(poll);
      clearTimeout(timer);
      this.sub.unsubscribe();
    }
    const job = await loadJob(this.bus.jsm, this.jobId);
    return job && isTerminal(job.status) ? job : undefined;
  }

  close(): void {
    this.sub.unsubscribe();
  }
}

/**
 * Makes a job durable: the render command goes to the RENDER work queue, then
 * job.accepted is appended to the job's subject. Both are acknowledged by
 * JetStream (file storage) before this resolves. The command carries the
 * acceptance, so a gateway crash between the two cannot lose the job: the
 * worker appends it.
 */
export async function submitJob(
  bus: JobBus,
  input: { jobId: string; keyId: string; plan: string; request: JobRequest; templateVersion: number },
): Promise<JobEvent> {
  const accepted = jobEvent("job.accepted", {
    jobId: input.jobId,
    keyId: input.keyId,
    source: "gateway",
    accepted: {
      kind: input.request.kind === "image" ? jobEventsV1.JobKind.JOB_KIND_IMAGE : jobEventsV1.JobKind.JOB_KIND_RENDER,
      templateId: input.request.templateId ?? "",
      templateVersion: input.templateVersion,
      html: input.request.html ?? "",
      dataJson: input.request.dataJson,
      webhookUrl: input.request.webhookUrl ?? "",
      plan: input.plan,
    },
  });
  const command: jobEventsV1.RenderCommand = { jobId: input.jobId, keyId: input.keyId, accepted };
  await publishEvent(bus.js, {
    subject: subjects.renderRequested,
    spanSubject: subjects.renderRequested,
    msgId: input.jobId,
    type: "render.requested",
    data: jobEventsV1.RenderCommand.encode(command).finish(),
  });
  try {
    await appendJobEvent(bus.js, accepted, 0);
  } catch (err) {
    // A worker that took the command first appended this same acceptance.
    if (!isWrongLastSequence(err)) throw err;
  }
  return accepted;
}
