import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  nanos,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from "nats";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Subjects: dot-separated nouns, then the verb where there is one, then the version. */
export const subjects = {
  /** Every event of one job, in order, on the job's own subject (optimistic concurrency per job). */
  job: (jobId: string) => `pressroom.job.${jobId}.v1`,
  allJobs: "pressroom.job.*.v1",
  /**
   * Core NATS only, captured by no stream: a job's terminal event, announced
   * by the worker once JetStream has acknowledged its append.
   */
  jobOutcome: (jobId: string) => `pressroom.outcome.${jobId}.v1`,
  renderRequested: "pressroom.render.requested.v1",
  account: (keyId: string) => `pressroom.account.${keyId}.v1`,
  allAccounts: "pressroom.account.*.v1",
  webhookDelivery: "pressroom.webhook.delivery.v1",
} as const;

export const streams = {
  JOBS: "JOBS",
  RENDER: "RENDER",
  ACCOUNTS: "ACCOUNTS",
  WEBHOOKS: "WEBHOOKS",
} as const;

export const consumers = {
  renderWorkers: "render-workers",
  meteringJobs: "metering-jobs",
  webhookDispatch: "webhook-dispatch",
  webhookDelivery: "webhook-delivery",
  auditProjection: "audit-projection",
} as const;

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

type StreamSpec = Partial<StreamConfig> & Pick<StreamConfig, "name" | "subjects">;
type ConsumerSpec = { stream: string; config: Partial<ConsumerConfig> & { durable_name: string } };

/** The streams and consumers of Pressroom: the one place they are defined. */
export const STREAMS: StreamSpec[] = [
  {
    name: streams.JOBS,
    subjects: [subjects.allJobs],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(90 * DAY),
    duplicate_window: nanos(2 * MINUTE),
    allow_direct: true,
    discard: DiscardPolicy.Old,
  },
  {
    name: streams.RENDER,
    subjects: [subjects.renderRequested],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    max_age: nanos(DAY),
    duplicate_window: nanos(2 * MINUTE),
  },
  {
    name: streams.ACCOUNTS,
    subjects: [subjects.allAccounts],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    duplicate_window: nanos(2 * MINUTE),
    allow_direct: true,
  },
  {
    name: streams.WEBHOOKS,
    subjects: [subjects.webhookDelivery],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    max_age: nanos(3 * DAY),
    duplicate_window: nanos(2 * MINUTE),
  },
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
      filter_subject: subjects.allJobs,
      ack_wait: nanos(30_000),
      max_ack_pending: 10_000,
    },
  },
  {
    stream: streams.JOBS,
    config: {
      durable_name: consumers.webhookDispatch,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subjects.allJobs,
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
];

function isNotFound(err: unknown): boolean {
  const e = err as { code?: string; api_error?: { err_code?: number } };
  return e.code === "404" || e.api_error?.err_code === 10059 || e.api_error?.err_code === 10014;
}

/**
 * Creates or updates the given streams and consumers; safe to run from every
 * replica at every start.
 */
export async function provisionTopology(
  jsm: JetStreamManager,
  options: { streams?: StreamSpec[]; consumers?: ConsumerSpec[] } = {},
): Promise<void> {
  for (const spec of options.streams ?? STREAMS) {
    try {
      await jsm.streams.info(spec.name);
      await jsm.streams.update(spec.name, spec);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await jsm.streams.add(spec);
      } catch (addErr) {
        // Another replica may have created it between our calls.
        await jsm.streams.info(spec.name).catch(() => Promise.reject(addErr));
      }
    }
  }
  for (const spec of options.consumers ?? CONSUMERS) {
    try {
      await jsm.consumers.info(spec.stream, spec.config.durable_name);
      await jsm.consumers.update(spec.stream, spec.config.durable_name, spec.config);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await jsm.consumers.add(spec.stream, spec.config);
      } catch (addErr) {
        await jsm.consumers.info(spec.stream, spec.config.durable_name).catch(() => Promise.reject(addErr));
      }
    }
  }
}
