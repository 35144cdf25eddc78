import { InterceptingCall, ServerInterceptingCall, status as GrpcStatus, type Interceptor, type ServerInterceptor } from "@grpc/grpc-js";
import type { Attributes } from "@opentelemetry/api";
import { recordSince, secondsHistogram } from "./metrics";

const serverDuration = secondsHistogram("rpc.server.duration", "gRPC calls served, by method and status.");
const clientDuration = secondsHistogram("rpc.client.duration", "gRPC calls made, by method and status.");

/** "/pressroom.identity.v1.IdentityService/Authenticate" → the rpc.* attributes of the semantic conventions. */
function rpcAttributes(path: string, code: number): Attributes {
  const [service = "", method = ""] = path.replace(/^\//, "").split("/");
  return { "rpc.system": "grpc", "rpc.service": service, "rpc.method": method, "rpc.grpc.status_code": GrpcStatus[code] ?? String(code) };
}

const UNTIMED = new Set(["/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"]);

/** Times every call a server answers, from its start to the status it sends. */
export const serverMetricsInterceptor: ServerInterceptor = (method, call) => {
  if (UNTIMED.has(method.path)) return new ServerInterceptingCall(call);
  const startedAt = performance.now();
  return new ServerInterceptingCall(call, {
    sendStatus(status, next) {
      recordSince(serverDuration, startedAt, rpcAttributes(method.path, status.code ?? GrpcStatus.UNKNOWN));
      next(status);
    },
  });
};

/** Times every call a client makes, from its start to the status it receives. */
export const clientMetricsInterceptor: Interceptor = (options, nextCall) => {
  const path = options.method_definition.path;
  const startedAt = performance.now();
  return new InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      next(metadata, {
        onReceiveStatus(status, nextStatus) {
          recordSince(clientDuration, startedAt, rpcAttributes(path, status.code));
          nextStatus(status);
        },
      });
    },
  });
};
