import { storageV1 } from "@pressroom/contracts";
import { startGrpcServer, type GrpcServerHandle } from "@pressroom/platform";
import type { JetStreamClient, ObjectStore } from "nats";
import { storageService, type StorageDeps } from "./outputs/outputs.grpc";

/**
 * Opens the output bucket, which the provisioning step made (with a max age
 * that deletes outputs even if no sweep runs): nats.js creates a bucket only
 * when it is missing, and main.ts opens it only once it exists.
 */
export function openOutputStore(js: JetStreamClient, bucket: string): Promise<ObjectStore> {
  return js.views.os(bucket);
}

export function createStorageServer(deps: StorageDeps, port: number): Promise<GrpcServerHandle> {
  return startGrpcServer({ port, services: [{ definition: storageV1.StorageServiceService, implementation: storageService(deps) }] });
}
