import { DEFAULT_OUTPUT_BUCKET } from "../config";
import { objectChunkSubject } from "./object-chunks";
import { consumers, objectStoreStream, streams, subjects, type JobWriter } from "./topology";

/** Who connects to NATS: the six services and the one-off provisioning step. */
export const NATS_COMPONENTS = ["gateway", "identity", "metering", "render", "storage", "webhook", "provision"] as const;
export type NatsComponent = (typeof NATS_COMPONENTS)[number];

export interface NatsPermissions {
  publish: string[];
  subscribe: string[];
}

const API = "$JS.API";
const streamInfo = (stream: string) => `${API}.STREAM.INFO.${stream}`;
const directGet = (stream: string) => [`${API}.DIRECT.GET.${stream}`, `${API}.DIRECT.GET.${stream}.>`];
/** Binding to a durable pull consumer: its info, pulls and the acks of its messages. */
const pullConsumer = (stream: string, consumer: string) => [
  `${API}.CONSUMER.INFO.${stream}.${consumer}`,
  `${API}.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
  `$JS.ACK.${stream}.${consumer}.>`,
];
/** Any subject of one token in place of the job or key id. */
const jobsBy = (writer: JobWriter) => subjects.job("*", writer);
const anyAccount = subjects.account("*");
const anyOutcome = subjects.outcomes("*");

/**
 * What each component may publish and subscribe to, derived from the
 * topology: the subjects it writes, the JetStream API calls it makes on the
 * streams and consumers it binds to, and its request replies (_INBOX). No
 * service may create, change or delete a stream or a durable consumer; only
 * the provisioning step may. The nats-server authorization of the chart and
 * of the tests is built from this (charts/pressroom/files/nats-topology.json).
 *
 * Each of the three components that append job events (gateway, render,
 * webhook) may publish only under its own writer token of the job subjects,
 * and the readers ignore an event stored under a writer that may not write
 * it (jobs.ts of @pressroom/domain): no component but render can make a job succeed.
 */
export function natsPermissions(outputBucket = DEFAULT_OUTPUT_BUCKET): Record<NatsComponent, NatsPermissions> {
  const objects = objectStoreStream(outputBucket);
  const common = [`${API}.INFO`];
  const replies = ["_INBOX.>"];
  return {
    gateway: {
      publish: [
        ...common,
        jobsBy("gateway"),
        subjects.renderRequested,
        streamInfo(streams.JOBS),
        streamInfo(streams.RENDER),
        `${API}.CONSUMER.INFO.${streams.RENDER}.${consumers.renderWorkers}`,
        ...directGet(streams.JOBS),
      ],
      subscribe: [...replies, anyOutcome],
    },
    identity: {
      publish: [...common, anyAccount, streamInfo(streams.ACCOUNTS)],
      subscribe: replies,
    },
    metering: {
      publish: [
        ...common,
        anyAccount,
        streamInfo(streams.JOBS),
        streamInfo(streams.ACCOUNTS),
        ...pullConsumer(streams.JOBS, consumers.meteringJobs),
        ...directGet(streams.JOBS),
        subjects.jobExpiryRequested,
        // Batch items, dispatched to the RENDER queue as their keys' slots free up.
        subjects.renderRequested,
        // A batch's end: its archive asked for, its archive recorded, its end announced.
        subjects.batchEnded,
        subjects.batchCompleted,
        streamInfo(streams.BATCHES),
        ...pullConsumer(streams.BATCHES, consumers.meteringBatches),
      ],
      subscribe: replies,
    },
    render: {
      publish: [
        ...common,
        jobsBy("render"),
        anyOutcome,
        // Customers' own templates: created, versioned, deleted.
        anyAccount,
        streamInfo(streams.ACCOUNTS),
        // An output's chunks, under no name: only storage names them (and may read or delete them).
        objectChunkSubject(outputBucket, "*"),
        streamInfo(streams.JOBS),
        streamInfo(streams.RENDER),
        ...pullConsumer(streams.RENDER, consumers.renderWorkers),
        ...directGet(streams.JOBS),
        // A rendered job's destination, handed to the webhook service.
        subjects.destinationDelivery,
        // An ended job's callback, scheduled with its outcome (appendOutcome).
        subjects.webhookDelivery,
      ],
      subscribe: [...replies, subjects.jobExpiryRequested, subjects.destinationSettled],
    },
    storage: {
      publish: [
        ...common,
        `$O.${outputBucket}.>`,
        streamInfo(objects),
        `${API}.STREAM.PURGE.${objects}`,
        `${API}.STREAM.MSG.GET.${objects}`,
        ...directGet(objects),
        // Reading an object: an ordered (ephemeral) consumer of the bucket's stream.
        `${API}.CONSUMER.CREATE.${objects}`,
        `${API}.CONSUMER.CREATE.${objects}.>`,
        `${API}.CONSUMER.INFO.${objects}.>`,
        `${API}.CONSUMER.DELETE.${objects}.>`,
        "$JS.FC.>",
        // Batch archives: asked for by metering, answered with the archive.
        subjects.batchArchived,
        streamInfo(streams.BATCHES),
        ...pullConsumer(streams.BATCHES, consumers.storageArchives),
      ],
      subscribe: replies,
    },
    webhook: {
      publish: [
        ...common,
        jobsBy("webhook"),
        subjects.webhookDelivery,
        streamInfo(streams.JOBS),
        streamInfo(streams.WEBHOOKS),
        ...pullConsumer(streams.JOBS, consumers.auditProjection),
        ...pullConsumer(streams.JOBS, consumers.readModels),
        ...pullConsumer(streams.WEBHOOKS, consumers.webhookDelivery),
        ...directGet(streams.JOBS),
        streamInfo(streams.DESTINATIONS),
        ...pullConsumer(streams.DESTINATIONS, consumers.destinationDelivery),
        subjects.destinationSettled,
        streamInfo(streams.BATCHES),
        ...pullConsumer(streams.BATCHES, consumers.webhookBatchCallbacks),
      ],
      subscribe: replies,
    },
    // The one-off steps: provisioning, and the operator's audit rebuild (webhook's
    // dist/audit-rebuild.js, which replays JOBS through a consumer of its own).
    provision: {
      publish: [`${API}.>`, "$JS.ACK.>"],
      subscribe: replies,
    },
  };
}

const quoted = (list: string[]) => list.map((subject) => JSON.stringify(subject)).join(", ");

/** The `authorization` block of a nats-server config: one user per component, with its permissions. */
export function natsAuthorization(passwords: Record<NatsComponent, string>, outputBucket = DEFAULT_OUTPUT_BUCKET): string {
  const permissions = natsPermissions(outputBucket);
  const users = NATS_COMPONENTS.map(
    (component) =>
      `    { user: ${JSON.stringify(component)}, password: ${JSON.stringify(passwords[component])}, permissions: { publish: { allow: [${quoted(permissions[component].publish)}] }, subscribe: { allow: [${quoted(permissions[component].subscribe)}] } } }`,
  );
  return `authorization {\n  users = [\n${users.join("\n")}\n  ]\n}\n`;
}

/**
 * What the Helm chart reads of the topology: its KEDA trigger's stream and
 * consumer, and the NATS users' permissions (with the default output
 * bucket). Kept in charts/pressroom/files/nats-topology.json, written by
 * `npm run chart:topology`, compared with this by a test.
 */
export function chartTopology(): { render: { stream: string; consumer: string }; users: Record<NatsComponent, NatsPermissions> } {
  return { render: { stream: streams.RENDER, consumer: consumers.renderWorkers }, users: natsPermissions() };
}
