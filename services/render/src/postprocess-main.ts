/**
 * Merging and post-processing on their own (issue 39, item 3): qpdf, Ghostscript and pdf-lib
 * parse what Chromium printed here, in a process that holds no credential, never in the render
 * worker beside its database URL, NATS password and gRPC key. The chart runs this in a container
 * of its own in the render pod (its own user, no Secret, no token, its own bounded /tmp); locally
 * the worker starts it as a child with an environment of a few allowed names (postprocess/host.ts).
 * It listens on 127.0.0.1 only (RENDER_POSTPROCESS_PORT; 0 picks one and writes
 * `{"port":N}` on standard output). SIGTERM stops it once the tasks in flight have answered (at most STOP_MS); so
 * does SIGINT, except for the worker's child, which the worker stops.
 */
import type { AddressInfo } from "node:net";
import { createLogger } from "@pressroom/platform/logger";
import { loadPostProcessHostConfig } from "./config";
import { warmPdfSteps } from "./postprocess/pdf-steps";
import { sweepAbandonedScratch } from "./postprocess/tools";
import { createPostProcessServer } from "./postprocess/server";

/** How long a stop waits for the tasks in flight (the worker has drained before the container is stopped). */
const STOP_MS = 5_000;

function main(): void {
  const config = loadPostProcessHostConfig();
  const logger = createLogger("postprocess", config.LOG_LEVEL);
  // Scratch files of a process killed before it could remove them (post-processing's, a merge's parts).
  void sweepAbandonedScratch().then(
    (swept) => swept.length > 0 && logger.info({ swept: swept.length }, "swept scratch directories left by processes that are gone"),
    (err: unknown) => logger.warn({ err }, "could not sweep abandoned scratch directories"),
  );
  warmPdfSteps();
  const server = createPostProcessServer(logger);
  server.listen(config.RENDER_POSTPROCESS_PORT, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    if (config.RENDER_POSTPROCESS_PORT === 0) process.stdout.write(`${JSON.stringify({ port })}\n`);
    logger.info({ port }, "post-processing listening on 127.0.0.1");
  });
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), STOP_MS).unref();
  };
  process.once("SIGTERM", stop);
  // The worker's child (port 0) shares the worker's process group, so a terminal's Ctrl-C reaches it too: the
  // worker stops it with SIGTERM once its renders have ended, and stopping first would fail their post-processing.
  if (config.RENDER_POSTPROCESS_PORT === 0) process.on("SIGINT", () => undefined);
  else process.once("SIGINT", stop);
}

main();
