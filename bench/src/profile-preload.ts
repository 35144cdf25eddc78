/**
 * Preloaded into each service by `npm run bench -- profile` (NODE_OPTIONS
 * --require): SIGUSR2 starts V8's sampling profiler, the next SIGUSR2 stops it
 * and writes the profile to PRESSROOM_PROFILE_DIR. Startup stays out of it.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import path from "node:path";
import { isMainThread } from "node:worker_threads";

const dir = process.env.PRESSROOM_PROFILE_DIR;
if (dir && isMainThread) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on("SIGUSR2", () => {
    if (!running) {
      session.post("Profiler.enable", () => session.post("Profiler.setSamplingInterval", { interval: 1000 }, () => session.post("Profiler.start")));
      running = true;
      return;
    }
    running = false;
    session.post("Profiler.stop", (err, result) => {
      const name = `${process.env.OTEL_SERVICE_NAME ?? "node"}-${process.pid}.cpuprofile`;
      writeFileSync(path.join(dir, err ? `${name}.failed` : name), err ? String(err) : JSON.stringify(result.profile));
    });
  });
}
