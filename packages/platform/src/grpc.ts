import {
  Server,
  ServerCredentials,
  credentials,
  Metadata,
  type CallOptions,
  type ChannelOptions,
  type Client,
  type ClientOptions,
  type ClientUnaryCall,
  type ServerUnaryCall,
  type ServiceDefinition,
  type ServiceError,
  type UntypedServiceImplementation,
  type sendUnaryData,
} from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { fromGrpcError, toGrpcError } from "./errors";
import type { Logger } from "./logger";
import { clientMetricsInterceptor, serverMetricsInterceptor } from "./telemetry/grpc-metrics";

export interface GrpcServerHandle {
  readonly server: Server;
  readonly port: number;
  setServing(serving: boolean): void;
  /** Stops accepting calls and waits for in-flight calls, up to timeoutMs. */
  stop(timeoutMs: number): Promise<void>;
}

/** A gRPC service with its implementation: what a service's createServer() builds and startGrpcServer binds. */
export interface GrpcService {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

/** Starts a gRPC server with the given services plus grpc.health.v1; every call is timed (rpc.server.duration). */
export async function startGrpcServer(options: { port: number; host?: string; services: GrpcService[] }): Promise<GrpcServerHandle> {
  const server = new Server({ "grpc.max_receive_message_length": 64 * 1024 * 1024, interceptors: [serverMetricsInterceptor] });
  for (const service of options.services) server.addService(service.definition, service.implementation);
  const health = new HealthImplementation({ "": "NOT_SERVING" });
  health.addToServer(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${options.host ?? "0.0.0.0"}:${options.port}`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
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

type ClientConstructor<C> = new (address: string, creds: ReturnType<typeof credentials.createInsecure>, options?: ClientOptions) => C;

/** A client with Pressroom's channel options; every call is timed (rpc.client.duration). */
export function createGrpcClient<C extends Client>(Ctor: ClientConstructor<C>, address: string): C {
  return new Ctor(address, credentials.createInsecure(), { ...CHANNEL_OPTIONS, interceptors: [clientMetricsInterceptor] });
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

/** Calls a unary method with a deadline; failures come back as AppError. */
export function call<Req, Res>(client: Client, method: UnaryMethod<Req, Res>, request: Req, deadlineMs = 5_000): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    method.call(client, request, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, response) =>
      err ? reject(fromGrpcError(err)) : resolve(response),
    );
  });
}
