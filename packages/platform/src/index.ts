// The platform kit: infrastructure every service is built on. It knows nothing of documents, plans or jobs (those are @pressroom/domain).
export {
  baseConfigShape,
  ConfigError,
  DEFAULT_GRPC_PORTS,
  DEFAULT_HEALTH_PORTS,
  DEFAULT_HTTP_PORT,
  DEFAULT_NATS_URL,
  DEFAULT_OUTPUT_BUCKET,
  DEFAULT_PUBLIC_BASE_URL,
  defaultGrpcAddr,
  env,
  grpcServiceShape,
  grpcTlsShape,
  sealingKeyShape,
  sealingPublicKeyShape,
  destinationSealingKeyShape,
  destinationSealingPublicKeyShape,
  type GrpcServerName,
  jobBoundsShape,
  loadConfig,
  MAX_OUTPUT_TTL_SECONDS,
  natsUrlShape,
  outputStoreShape,
  z,
} from "./config";
export { clientBucket } from "./client-bucket";
export { AppError, ERROR_CODES, errorBody, type ErrorCode, fromGrpcError, notReady, toGrpcError } from "./errors";
export {
  call,
  callSignal,
  type ClientConstructor,
  connectEarly,
  createGrpcClient,
  GRPC_PEERS,
  type GrpcPeer,
  type GrpcRelease,
  type GrpcServerHandle,
  type GrpcService,
  type GrpcTls,
  grpcTlsOf,
  LOCAL_RELEASE,
  type MethodCallers,
  peerDnsName,
  peerIdentity,
  peerOf,
  startGrpcServer,
  unary,
} from "./grpc";
export { ensureGrpcCertificates, type GrpcCertificates, grpcTlsEnv } from "./grpc-certificates";
export { newId } from "./ids";
export { Lifecycle, SHUTDOWN_STAGES, type ShutdownStage, startHealthServer } from "./lifecycle";
export { createLogger, type Logger } from "./logger";
export { createDb, migrateToLatest, pingDb } from "./db/db";
export {
  type Bus,
  type Consumer,
  runService,
  type ServiceConfig,
  type ServiceContext,
  type ServiceDefinition,
  type ServiceParts,
  SHUTDOWN_ANSWER_RESERVE_MS,
  startService,
} from "./run-service";
export { runMigrateEntrypoint, type Seed } from "./db/migrate-main";
export { connectNats, type NatsOptions } from "./nats/connection";
export { chartTopology, NATS_COMPONENTS, natsAuthorization, type NatsComponent, natsPermissions, type NatsPermissions } from "./nats/access";
export { awaitTopology, PROVISION_HINT } from "./nats/bind";
export { BatchingEventConsumer, ConsumerLoop, type ConsumerSource, EventConsumer, type EventSpec } from "./nats/consumer-loop";
export { directGet, type DirectQuery } from "./nats/direct";
export { consumeSpan, EVENT_TYPE_HEADER, isWrongLastSequence, publishEvent, type PublishOptions, traceContextOf } from "./nats/events";
export {
  commitObject,
  findObject,
  objectChunkSubject,
  purgeObject,
  purgeObjectChunks,
  readObject,
  type StoredObject,
  writeObjectChunks,
  writeObjectStream,
  type WrittenChunks,
} from "./nats/object-chunks";
export {
  consumers,
  CONSUMERS,
  RETIRED_CONSUMERS,
  JOB_SETTLE_MARGIN_MS,
  JOB_WRITERS,
  jobOverdueAfterMs,
  type JobWriter,
  objectStoreStream,
  type OutputStoreSpec,
  type ProvisionOptions,
  type ProvisionReport,
  provisionTopology,
  RENDER_ATTEMPTS,
  streams,
  STREAMS,
  subjects,
  SUBMIT_GIVE_UP_MS,
} from "./nats/topology";
export { missingTopology, type TopologyNeeds } from "./nats/bind";
export {
  BYTES_BUCKETS,
  bytesHistogram,
  COUNT_BUCKETS,
  meter,
  recordSince,
  SECONDS_BUCKETS,
  secondsHistogram,
  serveMetrics,
  setPrometheusExporter,
  statusClass,
} from "./telemetry/metrics";
export { RedactingSpanExporter, redactQueryValues, redactSecrets } from "./telemetry/redact";
export { instrumentations, outgoingOrigin, shutdownTelemetry, startTelemetry, type TelemetryHandle } from "./telemetry/setup";
export { SpanKind, tracer, withSpan } from "./telemetry/tracing";
export { serveThread, ThreadPool, type ThreadPoolOptions, ThreadTaskFailed } from "./thread-pool";
export {
  type AddressKind,
  checkPort,
  type Classification,
  classifyAddress,
  createGuardedAgent,
  createGuardedHttpAgent,
  type GuardedAgentOptions,
  guardedLookup,
  type GuardedLookupFunction,
  type GuardOptions,
  type LookupAllFunction,
  NetGuardError,
  portOf,
  type PublicAddress,
  type ResolveOptions,
  resolvePublic,
  resolvePublicAll,
  WEB_PORTS,
} from "./netguard";
export {
  ensureSealingKey,
  isSealed,
  readSealingPrivateKey,
  readSealingPublicKey,
  seal,
  sealingPrivateKey,
  sealingPublicKey,
  unseal,
  type SealingKeyFiles,
} from "./sealing";
