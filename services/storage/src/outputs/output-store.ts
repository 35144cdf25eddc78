import type { JetStreamClient, ObjectStore } from "nats";

/**
 * Opens the output bucket, which the provisioning step made (with a max age
 * that deletes outputs even if no sweep runs): nats.js creates a bucket only
 * when it is missing, and main.ts opens it only once it exists.
 */
export function openOutputStore(js: JetStreamClient, bucket: string): Promise<ObjectStore> {
  return js.views.os(bucket);
}
