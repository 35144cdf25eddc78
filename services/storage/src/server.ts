import { storageV1 } from "@pressroom/contracts";
import { startGrpcServer, type GrpcServerHandle } from "@pressroom/platform";
import { nanos, StorageType, type JetStreamClient, type ObjectStore } from "nats";
import { storageService, type StorageDeps } from "./outputs/outputs.grpc";

/** Opens (or creates) the output bucket; its max age deletes outputs even if no sweep runs. */
export function openOutputStore(js: JetStreamClient, options: { bucket: string; ttlSeconds: number; replicas: number }): Promise<ObjectStore> {
  return js.views.os(options.bucket, {
    storage: StorageType.File,
    ttl: nanos((options.ttlSeconds + 3600) * 1000),
    replicas: options.replicas,
    description: "Pressroom rendered outputs",
  });
}

export function createStorageServer(deps: StorageDeps, port: number): Promise<GrpcServerHandle> {
  return startGrpcServer({ port, services: [{ definition: storageV1.StorageServiceService, implementation: storageService(deps) }] });
}
