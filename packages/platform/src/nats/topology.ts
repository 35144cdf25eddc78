import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from "nats";
import { MAX_OUTPUT_TTL_SECONDS } from "../config";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The components that append job events, each under its own token of the job's subjects. */
export const JOB_WRITERS = ["gateway", "render", "webhook"] as const;
export type JobWriter = (typeof JOB_WRITERS)[number];

/** Subjects: dot-separated nouns, then the verb where there is one, then the version. */
export const subjects = {
  /**
   * The events one writer appends to one job (optimistic concurrency per job
   * and writer). NATS lets no component publish under another's writer token.
   */
  job: (jobId: string, writer: JobWriter) => `pressroom.job.${jobId}.${writer}.v1`,
  /** Every event of one job, in order, whoever wrote it. */
  jobEvents: (jobId: string) => `pressroom.job.${jobId}.*.v1`,
  allJobs: "pressroom.job.*.*.v1",
  /** Every job's events from one writer: render's are the lifecycle (started, succeeded, failed) that metering and callbacks act on. */
  jobsBy: (writer: JobWriter) => `pressroom.job.*.${writer}.v1`,
  /**
   * Core NATS only, captured by no stream: where a gateway process waits for
   * the outcomes of the jobs it submitted, one subscription for all of them.
   * The worker announces a job's terminal event there once JetStream has
   * acknowledged its append. `inbox` is the token the job's render command
   * names (RenderCommand.outcome_inbox), or the job's id for a command that
   * names none (an older gateway, which waited on one subject per job).
   */
  outcomes: (inbox: string) => `pressroom.outcome.${inbox}.v1`,
  renderRequested: "pressroom.render.requested.v1",
  /**
   * Core NATS only: metering asks render to end a job that is overdue (see
   * jobOverdueAfterMs) and has not ended. The payload is the job's id; render
   * checks the job itself, and only render may append its job.failed.
   */
  jobExpiryRequested: "pressroom.render.expiry.requested.v1",
  account: (keyId: string) => `pressroom.account.${keyId}.v1`,
  allAccounts: "pressroom.account.*.v1",
  webhookDelivery: "pressroom.webhook.delivery.v1",
  /**
   * The DESTINATIONS work queue: one message per job whose output is to be PUT to the
   * customer's destination (DestinationDelivery, published by render once the job is rendered).
   */
  destinationDelivery: "pressroom.destination.delivery.v1",
  /**
   * Core NATS only: the webhook service asks render to end a job whose destination accepted
   * its output or was given up (DestinationSettled). Render checks the job itself, and only
   * render appends its job.succeeded or job.failed.
   */
  destinationSettled: "pressroom.render.destination.settled.v1",
  /**
   * A batch's lifecycle after its last item ended (JSON, packages/domain batch-events.ts), each
   * published with the batch's id in its Nats-Msg-Id: metering asks storage for the batch's
   * archive (ended, archive batches only), storage answers with it (archived), and metering
   * announces the batch's end once its archive is ready (completed), which webhook calls back.
   */
  batchEnded: "pressroom.batch.ended.v1",
  batchArchived: "pressroom.batch.archived.v1",
  batchCompleted: "pressroom.batch.completed.v1",
  allBatches: "pressroom.batch.*.v1",
} as const;

export const streams = {
  JOBS: "JOBS",
  RENDER: "RENDER",
  ACCOUNTS: "ACCOUNTS",
  WEBHOOKS: "WEBHOOKS",
  DESTINATIONS: "DESTINATIONS",
  BATCHES: "BATCHES",
} as const;

export const consumers = {
  renderWorkers: "render-workers",
  meteringJobs: "metering-jobs",
  webhookDelivery: "webhook-delivery",
  destinationDelivery: "destination-delivery",
  auditProjection: "audit-projection",
  readModels: "read-models",
  storageArchives: "storage-archives",
  meteringBatches: "metering-batches",
  webhookBatchCallbacks: "webhook-batch-callbacks",
} as const;

/**
 * Durable consumers an earlier version made that nothing reads any more: provisioning deletes them.
 * `webhook-dispatch` (JOBS, render's events) scheduled callbacks; render does now (appendOutcome).
 */
export const RETIRED_CONSUMERS: { stream: string; name: string }[] = [{ stream: streams.JOBS, name: "webhook-dispatch" }];

/**
 * Deliveries of a render command that may render it. One more delivery is
 * allowed (the consumer's max_deliver): it only records the job as failed, for
 * a job whose every attempt died before it could record anything.
 */
export const RENDER_ATTEMPTS = 3;

/**
 * A render command stored this long after its job's acceptance was written
 * was given up by the gateway (it answered 500 and refunded the job; its
 * publishes, retries included, take well under this): a worker drops it. Such
 * a command is a publish the client buffered during a NATS outage and sent
 * once reconnected.
 */
export const SUBMIT_GIVE_UP_MS = 60_000;

/** The RENDER stream's max age when the provisioning step is not told RENDER_MAX_QUEUE_WAIT_MS (the same default). */
const RENDER_MAX_QUEUE_WAIT_DEFAULT_MS = HOUR;

/** What a render may still take after its deadline to store its output and record its outcome. */
export const JOB_SETTLE_MARGIN_MS = 30_000;

/**
 * How long after its acceptance a job that has not ended is overdue: its
 * command left the RENDER queue (the stream's max age is the queue's maximum
 * wait, retries included), so no attempt can start any more, and one that
 * started has had its deadline and the settle margin. Metering stops renewing
 * an overdue job's slot and asks render to end it (subjects.jobExpiryRequested).
 */
export function jobOverdueAfterMs(bounds: { maxQueueWaitMs: number; deadlineMs: number }): number {
  return bounds.maxQueueWaitMs + bounds.deadlineMs + JOB_SETTLE_MARGIN_MS;
}

type StreamSpec = Partial<StreamConfig> & Pick<StreamConfig, "name" | "subjects">;
type ConsumerSpec = { stream: string; config: Partial<ConsumerConfig> & { durable_name: string } };

/** A stream of Pressroom's: kept on file, publications deduplicated by message id for two minutes. */
const stream = (spec: StreamSpec): StreamSpec => ({ storage: StorageType.File, duplicate_window: nanos(2 * MINUTE), ...spec });

/** The streams and consumers of Pressroom: the one place they are defined. */
export const STREAMS: StreamSpec[] = [
  stream({
    name: streams.JOBS,
    subjects: [subjects.allJobs],
    retention: RetentionPolicy.Limits,
    max_age: nanos(90 * DAY),
    allow_direct: true,
    discard: DiscardPolicy.Old,
  }),
  stream({
    name: streams.RENDER,
    subjects: [subjects.renderRequested],
    retention: RetentionPolicy.Workqueue,
    // The queue's maximum wait (RENDER_MAX_QUEUE_WAIT_MS, given to provisionTopology).
    max_age: nanos(RENDER_MAX_QUEUE_WAIT_DEFAULT_MS),
  }),
  stream({
    name: streams.ACCOUNTS,
    subjects: [subjects.allAccounts],
    retention: RetentionPolicy.Limits,
    allow_direct: true,
  }),
  stream({
    name: streams.WEBHOOKS,
    subjects: [subjects.webhookDelivery],
    retention: RetentionPolicy.Workqueue,
    max_age: nanos(3 * DAY),
  }),
  // The destinations' url and headers (credentials, sealed to the webhook service) wait here until their job ended, then go.
  stream({
    name: streams.DESTINATIONS,
    subjects: [subjects.destinationDelivery],
    retention: RetentionPolicy.Workqueue,
    max_age: nanos(3 * DAY),
  }),
  stream({
    // Kept as long as WEBHOOKS: a batch.completed message is its callback's queue entry until delivered.
    name: streams.BATCHES,
    subjects: [subjects.allBatches],
    retention: RetentionPolicy.Limits,
    max_age: nanos(3 * DAY),
  }),
];

export const CONSUMERS: ConsumerSpec[] = [
  {
    stream: streams.RENDER,
    config: {
      durable_name: consumers.renderWorkers,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(45_000),
      max_deliver: RENDER_ATTEMPTS + 1,
      max_ack_pending: 1_000,
    },
  },
  {
    stream: streams.JOBS,
    config: {
      durable_name: consumers.meteringJobs,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subjects.jobsBy("render"),
      ack_wait: nanos(30_000),
      max_ack_pending: 10_000,
    },
  },
  {
    // One message per callback. A failed attempt naks it with the delay until
    // the next one, so a message waiting for its retry stays ack-pending:
    // max_ack_pending bounds the callbacks waiting at once (see
    // services/webhook/README.md). Unlimited deliveries: the retry window ends
    // a delivery, not this consumer.
    stream: streams.WEBHOOKS,
    config: {
      durable_name: consumers.webhookDelivery,
      ack_policy: AckPolicy.Explicit,
      // Handlers heartbeat (working()) every 10 s during an attempt.
      ack_wait: nanos(30_000),
      max_deliver: -1,
      max_ack_pending: 100_000,
    },
  },
  {
    // One message per destination, naked until its next attempt like a callback's (above).
    stream: streams.DESTINATIONS,
    config: {
      durable_name: consumers.destinationDelivery,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(30_000),
      max_deliver: -1,
      max_ack_pending: 100_000,
    },
  },
  {
    // The audit projection (services/webhook/src/audit): every job event, from the start.
    stream: streams.JOBS,
    config: {
      durable_name: consumers.auditProjection,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subjects.allJobs,
      ack_wait: nanos(30_000),
      max_ack_pending: 1_000,
    },
  },
  {
    // The read models of jobs, daily usage and deliveries (services/webhook/src/read-models): every
    // job event, from the start. The models keep their own position, so this consumer only brings
    // new events; what it cannot (a lost model) is read again from the stream by direct get.
    stream: streams.JOBS,
    config: {
      durable_name: consumers.readModels,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subjects.allJobs,
      ack_wait: nanos(30_000),
      max_ack_pending: 1_000,
    },
  },
  {
    // Storage builds a batch's archive (one at a time per replica; the handler heartbeats while it writes).
    stream: streams.BATCHES,
    config: {
      durable_name: consumers.storageArchives,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subjects.batchEnded,
      ack_wait: nanos(60_000),
      max_ack_pending: 100,
    },
  },
  {
    // Metering records a batch's archive and announces the batch's end.
    stream: streams.BATCHES,
    config: {
      durable_name: consumers.meteringBatches,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subjects.batchArchived,
      ack_wait: nanos(30_000),
      max_ack_pending: 1_000,
    },
  },
  {
    // One message per batch callback, as webhook-delivery: a failed attempt naks it until the next one.
    stream: streams.BATCHES,
    config: {
      durable_name: consumers.webhookBatchCallbacks,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subjects.batchCompleted,
      ack_wait: nanos(30_000),
      max_deliver: -1,
      max_ack_pending: 100_000,
    },
  },
];

/**
 * Storage's output bucket (a JetStream object store, stream `OBJ_<bucket>`):
 * its name and the outputs' lifetime are storage's settings OUTPUT_BUCKET and
 * OUTPUT_TTL_SECONDS (config.ts outputStoreShape), which the provisioning
 * step reads too. The bucket's max age, an hour past the longest an output
 * may live (that lifetime, or MAX_OUTPUT_TTL_SECONDS when a request asks for
 * it), deletes outputs even if no sweep runs.
 */
export interface OutputStoreSpec {
  bucket: string;
  ttlSeconds: number;
}

/** The stream behind an object store bucket. */
export const objectStoreStream = (bucket: string) => `OBJ_${bucket}`;

/** Whether a JetStream API error says the stream, consumer or bucket does not exist. */
export function isNotFound(err: unknown): boolean {
  const e = err as { code?: string; api_error?: { err_code?: number } };
  return e.code === "404" || e.api_error?.err_code === 10059 || e.api_error?.err_code === 10014;
}

export interface ProvisionOptions {
  /** Replicas of every stream (1 for a single-node NATS; 3 recommended for a cluster). Consumers follow their stream. */
  replicas: number;
  outputStore: OutputStoreSpec;
  /** The RENDER stream's max age: the longest a render command waits, its retries included (RENDER_MAX_QUEUE_WAIT_MS). */
  renderMaxQueueWaitMs?: number;
  streams?: StreamSpec[];
  consumers?: ConsumerSpec[];
}

/** What provisionTopology did to each stream, consumer and bucket. */
export type ProvisionReport = { name: string; action: "created" | "updated" | "deleted" }[];

async function createOrUpdate(exists: () => Promise<unknown>, update: () => Promise<unknown>, add: () => Promise<unknown>): Promise<"created" | "updated"> {
  try {
    await exists();
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await add();
    return "created";
  }
  await update();
  return "updated";
}

/**
 * Creates or updates Pressroom's streams, consumers and output bucket. The
 * one-off provisioning step (provision-main.ts, the chart's provision Job,
 * the local stack) runs it; services only check (checkTopology).
 */
export async function provisionTopology(js: JetStreamClient, jsm: JetStreamManager, options: ProvisionOptions): Promise<ProvisionReport> {
  const report: ProvisionReport = [];
  for (const spec of options.streams ?? STREAMS) {
    // JetStream refuses a duplicate window longer than the max age: a queue wait under 2 min shortens it too.
    const wait = spec.name === streams.RENDER ? options.renderMaxQueueWaitMs : undefined;
    const maxAge = wait ? { max_age: nanos(wait), duplicate_window: nanos(Math.min(wait, 2 * MINUTE)) } : {};
    const config = { ...spec, ...maxAge, num_replicas: options.replicas };
    const action = await createOrUpdate(
      () => jsm.streams.info(spec.name),
      () => jsm.streams.update(spec.name, config),
      () => jsm.streams.add(config),
    );
    report.push({ name: `stream ${spec.name}`, action });
  }
  for (const spec of options.consumers ?? CONSUMERS) {
    const name = spec.config.durable_name;
    const action = await createOrUpdate(
      () => jsm.consumers.info(spec.stream, name),
      () => jsm.consumers.update(spec.stream, name, spec.config),
      () => jsm.consumers.add(spec.stream, spec.config),
    );
    report.push({ name: `consumer ${spec.stream}/${name}`, action });
  }
  if (!options.consumers) {
    for (const { stream, name } of RETIRED_CONSUMERS) {
      const deleted = await jsm.consumers.delete(stream, name).catch((err: unknown) => {
        if (isNotFound(err)) return false;
        throw err;
      });
      if (deleted) report.push({ name: `consumer ${stream}/${name}`, action: "deleted" });
    }
  }
  const { bucket, ttlSeconds } = options.outputStore;
  const stream = objectStoreStream(bucket);
  const maxAge = nanos((Math.max(ttlSeconds, MAX_OUTPUT_TTL_SECONDS) + 3600) * 1000);
  const action = await createOrUpdate(
    () => jsm.streams.info(stream),
    async () => {
      const { config } = await jsm.streams.info(stream);
      await jsm.streams.update(stream, { ...config, max_age: maxAge, num_replicas: options.replicas });
    },
    () => js.views.os(bucket, { storage: StorageType.File, ttl: maxAge, replicas: options.replicas, description: "Pressroom rendered outputs" }),
  );
  report.push({ name: `object store ${bucket}`, action });
  return report;
}
