import { readFileSync } from "node:fs";
import { createSecureContext, type PeerCertificate } from "node:tls";
import {
  Server,
  ServerInterceptingCall,
  experimental,
  Metadata,
  status as GrpcStatus,
  type CallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type ClientOptions,
  type ClientUnaryCall,
  type ServerInterceptor,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
  type sendUnaryData,
} from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { AppError, fromGrpcError, toGrpcError } from "./errors";
import { type GrpcPeer, type GrpcRelease, peerIdentity, peerOf, presentedIdentity, releaseOfCertificate } from "./grpc-identity";
import type { Logger } from "./logger";
import { clientMetricsInterceptor, serverMetricsInterceptor } from "./telemetry/grpc-metrics";

export { GRPC_PEERS, type GrpcPeer, type GrpcRelease, LOCAL_RELEASE, peerIdentity, peerOf } from "./grpc-identity";

/**
 * The TLS server name (SNI) a client asks a peer for: `gateway` → `gateway.pressroom.internal`.
 * Nothing checks it: a client checks the server's URI name (peerOf).
 */
export function peerDnsName(peer: GrpcPeer): string {
  return `${peer}.pressroom.internal`;
}

/**
 * A peer's mutual-TLS files (PEM): the deployment's CA, its own certificate
 * and private key. They are read again every `refreshMs` (default a minute),
 * so a renewed certificate or CA serves the next connections without a
 * restart.
 */
export interface GrpcTls {
  ca: string;
  cert: string;
  key: string;
  refreshMs?: number;
}

/** The files named by a service's GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY (see grpcTlsShape). */
export function grpcTlsOf(config: { GRPC_TLS_CA: string; GRPC_TLS_CERT: string; GRPC_TLS_KEY: string }): GrpcTls {
  return { ca: config.GRPC_TLS_CA, cert: config.GRPC_TLS_CERT, key: config.GRPC_TLS_KEY };
}

const TLS_REFRESH_MS = 60_000;
interface Certificates {
  provider: experimental.CertificateProvider;
  /** The release this process's certificate names, read at start: the only one whose peers it talks to. */
  release: GrpcRelease;
}
const certificateProviders = new Map<string, Certificates>();

/**
 * One file watcher per set of files in a process (its timer runs only while
 * a server or channel uses it). The files are checked once here, so a
 * certificate that does not match its key, a file that is no PEM, or a
 * certificate naming no peer of a release stops the start instead of failing
 * every connection.
 */
function certificateProvider(tls: GrpcTls): Certificates {
  const id = JSON.stringify([tls.ca, tls.cert, tls.key, tls.refreshMs]);
  let certificates = certificateProviders.get(id);
  if (!certificates) {
    const cert = readFileSync(tls.cert);
    try {
      createSecureContext({ ca: readFileSync(tls.ca), cert, key: readFileSync(tls.key) });
    } catch (err) {
      throw new Error(`the gRPC certificate ${tls.cert}, its key ${tls.key} or the CA ${tls.ca} cannot be used: ${(err as Error).message}`);
    }
    const release = releaseOfCertificate(cert, tls.cert);
    const provider = new experimental.FileWatcherCertificateProvider({
      caCertificateFile: tls.ca,
      certificateFile: tls.cert,
      privateKeyFile: tls.key,
      refreshIntervalMs: tls.refreshMs ?? TLS_REFRESH_MS,
    });
    certificates = { provider, release };
    certificateProviders.set(id, certificates);
  }
  return certificates;
}

/** grpc.health.v1 answers any peer of the release. */
const OPEN_TO_EVERY_PEER = new Set(["/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"]);

/**
 * Refuses a call with PERMISSION_DENIED, before its handler runs, unless the
 * client certificate names a peer of this server's release among the method's callers.
 */
function callerCheck(callers: ReadonlyMap<string, ReadonlySet<GrpcPeer>>, release: GrpcRelease, logger?: Logger): ServerInterceptor {
  return (method, call) =>
    new ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            const certificate = call.getAuthContext().sslPeerCertificate;
            const peer = peerOf(certificate, release);
            if (peer && (OPEN_TO_EVERY_PEER.has(method.path) || callers.get(method.path)?.has(peer))) return nextMetadata(metadata);
            logger?.warn(
              { method: method.path, caller: peer ?? "no peer of this release", identity: presentedIdentity(certificate) },
              "gRPC call refused: the caller may not call this method",
            );
            call.sendStatus({
              code: GrpcStatus.PERMISSION_DENIED,
              details: `${peer ?? "this certificate"} may not call ${method.path}`,
              metadata: new Metadata(),
            });
          },
        });
      },
    });
}

export interface GrpcServerHandle {
  readonly server: Server;
  readonly port: number;
  setServing(serving: boolean): void;
  /** Stops accepting calls and waits for in-flight calls, up to timeoutMs. */
  stop(timeoutMs: number): Promise<void>;
}

/** Each method of a service definition with the peers allowed to call it: every method must be listed. */
export type MethodCallers<D extends ServiceDefinition> = { readonly [method in keyof D]: readonly GrpcPeer[] };

/** A gRPC service with its implementation and its callers: what a service's createServer() builds and startGrpcServer binds. */
export interface GrpcService {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
  callers: Readonly<Record<string, readonly GrpcPeer[]>>;
}

/**
 * Starts a gRPC server with the given services plus grpc.health.v1, over
 * mutual TLS: a client without a certificate of the deployment's CA cannot
 * connect, and a call whose certificate names no peer of the server's own
 * release (another release's, another team's on the same issuer), or a peer not
 * among its method's callers, is answered PERMISSION_DENIED. Every call is timed (rpc.server.duration).
 */
export async function startGrpcServer(options: {
  port: number;
  host: string;
  tls: GrpcTls;
  services: GrpcService[];
  logger?: Logger;
}): Promise<GrpcServerHandle> {
  const callers = new Map<string, ReadonlySet<GrpcPeer>>();
  for (const service of options.services) {
    for (const [name, method] of Object.entries(service.definition)) {
      const allowed = service.callers[name];
      if (!allowed) throw new Error(`${method.path} has no callers listed`);
      callers.set(method.path, new Set(allowed));
    }
  }
  const certificates = certificateProvider(options.tls);
  const server = new Server({
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
    interceptors: [serverMetricsInterceptor, callerCheck(callers, certificates.release, options.logger)],
  });
  for (const service of options.services) server.addService(service.definition, service.implementation);
  const health = new HealthImplementation({ "": "NOT_SERVING" });
  health.addToServer(server);
  const { provider } = certificates;
  const serverCredentials = experimental.createCertificateProviderServerCredentials(provider, provider, true);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host}:${options.port}`, serverCredentials, (err, bound) => (err ? reject(err) : resolve(bound)));
  });
  // The server's credentials read the files asynchronously: a connection before that is closed unanswered.
  await new Promise<void>((resolve) => {
    const loaded = () => {
      provider.removeIdentityCertificateListener(loaded);
      resolve();
    };
    provider.addIdentityCertificateListener(loaded);
  });
  health.setStatus("", "SERVING");
  return {
    server,
    port,
    setServing: (serving) => health.setStatus("", serving ? "SERVING" : "NOT_SERVING"),
    stop: (timeoutMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, timeoutMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

/**
 * Adapts an async function to a unary gRPC handler: resolved values are sent,
 * thrown AppErrors become their gRPC status with code and hint in metadata.
 */
export function unary<Req, Res>(
  handler: (request: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>,
  logger?: Logger,
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  return (call, callback) => {
    handler(call.request, call).then(
      (response) => callback(null, response),
      (err: unknown) => {
        if (!(err instanceof Error && err.name === "AppError")) logger?.error({ err }, "unhandled error in gRPC handler");
        callback(toGrpcError(err) as ServiceError);
      },
    );
  };
}

const CHANNEL_OPTIONS: ChannelOptions = {
  // A peer that restarts (a deploy, a crash) is reconnected within 2 s, not
  // after grpc-js's default backoff of up to 120 s; its first calls then wait
  // at most that long.
  "grpc.initial_reconnect_backoff_ms": 100,
  "grpc.max_reconnect_backoff_ms": 2_000,
  "grpc.keepalive_time_ms": 30_000,
  "grpc.keepalive_timeout_ms": 10_000,
  "grpc.max_receive_message_length": 64 * 1024 * 1024,
  "grpc.service_config": JSON.stringify({
    methodConfig: [
      {
        name: [{}],
        retryPolicy: {
          maxAttempts: 3,
          initialBackoff: "0.05s",
          maxBackoff: "0.5s",
          backoffMultiplier: 2,
          retryableStatusCodes: ["UNAVAILABLE"],
        },
      },
    ],
  }),
};

export type ClientConstructor<C> = new (address: string, creds: ChannelCredentials, options?: ClientOptions) => C;

/**
 * A client with Pressroom's channel options over mutual TLS: it presents its
 * own certificate and accepts only a server whose certificate, signed by the
 * deployment's CA, names `server` of its own release (peerIdentity), whatever
 * the address. Every call is timed (rpc.client.duration).
 */
export function createGrpcClient<C extends Client>(
  Ctor: ClientConstructor<C>,
  address: string,
  tls: GrpcTls,
  server: GrpcPeer,
  options: ChannelOptions = {},
): C {
  const { provider, release } = certificateProvider(tls);
  const expected = peerIdentity(release, server);
  const checkServerIdentity = (_host: string, certificate: PeerCertificate) =>
    peerOf(certificate, release) === server ? undefined : new Error(`the server's certificate names ${presentedIdentity(certificate)}, not ${expected}`);
  return new Ctor(address, experimental.createCertificateProviderChannelCredentials(provider, provider, { checkServerIdentity }), {
    ...CHANNEL_OPTIONS,
    ...options,
    "grpc.ssl_target_name_override": peerDnsName(server),
    interceptors: [clientMetricsInterceptor],
  });
}

/**
 * Opens a client's connection ahead of its first call, so that call is not
 * the one paying for it. Resolves whether or not the server answered within
 * timeoutMs: a server that is down is the first call's business.
 */
export function connectEarly(client: Client, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => client.waitForReady(Date.now() + timeoutMs, (err) => resolve(!err)));
}

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

/**
 * Calls a unary method with a deadline; failures come back as AppError. `signal` cancels the call
 * (the server sees it cancelled: see callSignal), and the promise rejects with its reason.
 */
export function call<Req, Res>(client: Client, method: UnaryMethod<Req, Res>, request: Req, deadlineMs = 5_000, signal?: AbortSignal): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      pending.cancel();
      reject(signal!.reason);
    };
    const pending = method.call(client, request, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, response) => {
      signal?.removeEventListener("abort", onAbort);
      if (err) reject(fromGrpcError(err));
      else resolve(response);
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * What a server's handler stops with: aborted when the caller cancels the call or goes away, or
 * when the call's deadline passes (grpc-js answers DEADLINE_EXCEEDED but goes on running the handler).
 */
export function callSignal(serverCall: Pick<ServerUnaryCall<unknown, unknown>, "cancelled" | "once" | "getDeadline">): AbortSignal {
  const controller = new AbortController();
  const cancelled = () => controller.abort(new AppError("UNAVAILABLE", "the call was cancelled", "Retry with exponential backoff."));
  if (serverCall.cancelled) cancelled();
  else serverCall.once("cancelled", cancelled);
  const deadline = serverCall.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : Number(deadline);
  if (!Number.isFinite(at)) return controller.signal;
  return AbortSignal.any([controller.signal, AbortSignal.timeout(Math.max(0, at - Date.now()))]);
}
