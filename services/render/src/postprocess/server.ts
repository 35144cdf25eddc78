import { createServer, type IncomingMessage, type Server } from "node:http";
import type { Logger } from "@pressroom/platform/logger";
import { RenderFailure, byteSize } from "../engine";
import { merge, pagePng, postProcess, stampPng } from "./index";
import { partsOverCap } from "./qpdf";
import type { ToolLimits } from "./tools";
import { MAX_TASK_BYTES, STEPS_HEADER, failureOf, readFrames, type StepTimes, type WireTask } from "./wire";

/** Answers a health probe (the chart's startup and liveness probes). */
export const HEALTH_PATH = "/healthz";

/**
 * The post-processing process's server (see wire.ts): POST /postprocess (the task, then the
 * printed PDF), POST /merge (the task, then each part as it is rendered), POST /stamp-png
 * (the task, then a test-mode png to stamp TEST on) and POST /page-png (the task, its steps
 * optional, then a printed PDF whose first page it answers as a png). Every bound of
 * the steps holds here as in one process: the deadline (the time left when the task was
 * sent), the output cap (a frame past it is refused before it is read, a merge's parts held
 * to it together), the tools' own limits.
 */
export function createPostProcessServer(logger: Logger): Server {
  return createServer((req, res) => {
    if (req.method === "GET" && req.url === HEALTH_PATH) return void res.end("ok");
    if (req.method !== "POST" || !isTask(req.url)) {
      res.writeHead(404).end();
      return;
    }
    const started = performance.now();
    handle(req, req.url).then(
      ({ pdf, times }) => {
        res.writeHead(200, { "content-type": PNG_TASKS.has(req.url!) ? "image/png" : "application/pdf", [STEPS_HEADER]: JSON.stringify(times) });
        res.end(pdf);
      },
      (err: unknown) => {
        if (!(err instanceof RenderFailure)) logger.warn({ err, task: req.url }, "post-processing failed");
        res.writeHead(500, { "content-type": "application/json", connection: "close" });
        res.end(JSON.stringify(failureOf(err)));
      },
    );
    res.once("finish", () => logger.debug({ task: req.url, ms: Math.round(performance.now() - started) }, "post-processing task answered"));
  });
}

const TASKS = ["/postprocess", "/merge", "/stamp-png", "/page-png"] as const;
const PNG_TASKS = new Set<string>(["/stamp-png", "/page-png"]);
type Task = (typeof TASKS)[number];
const isTask = (url: string | undefined): url is Task => (TASKS as readonly (string | undefined)[]).includes(url);

async function handle(req: IncomingMessage, task: Task): Promise<{ pdf: Uint8Array; times: StepTimes }> {
  // The output cap bounds the frames after the task, once the task has said it.
  const bound: { limits?: ToolLimits } = {};
  const frames = readFrames(
    req,
    (index) => (index === 0 ? MAX_TASK_BYTES : bound.limits!.maxOutputBytes),
    (index, max) =>
      index === 0
        ? new Error(`the task is larger than ${byteSize(max)}`)
        : task === "/merge"
          ? partsOverCap(max)
          : new RenderFailure("output_cap", `the printed document is larger than ${byteSize(max)} (the output size cap)`),
  );
  const first = await frames.next();
  if (first.done) throw new Error("the request holds no task");
  const wire = JSON.parse(first.value.toString("utf8")) as WireTask;
  const limits: ToolLimits = { deadlineAt: performance.now() + wire.timeLeftMs, maxOutputBytes: wire.maxOutputBytes };
  bound.limits = limits;
  const times: StepTimes = [];
  if (task === "/merge") {
    const pdf = await merge(
      async (add) => {
        for await (const part of frames) await add(part);
      },
      limits,
      times,
    );
    return { pdf, times };
  }
  const printed = await frames.next();
  if (printed.done) throw new Error("the request holds no document");
  if (task === "/stamp-png") return { pdf: await stampPng(printed.value), times };
  if (task === "/page-png") return { pdf: await pagePng(printed.value, wire.steps, limits, times), times };
  if (!wire.steps) throw new Error("the request holds no steps");
  return { pdf: await postProcess(printed.value, wire.steps, limits, times), times };
}
