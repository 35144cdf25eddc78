import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startTestStack } from "@pressroom/stack";
import { benchDocuments } from "./documents";
import { benchKeys, runPressroom } from "./pressroom";
import { procStat } from "./proc";

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  samples: number[];
}

/** What a sampled function's time is spent on, by the code it belongs to. */
const STAGES: [string, RegExp][] = [
  ["gRPC and protobuf", /node_modules\/(@grpc\/|@bufbuild\/|protobufjs|long\/)|node:internal\/http2/],
  ["NATS client", /node_modules\/nats\//],
  ["PostgreSQL client", /node_modules\/(kysely|pg|pg-[a-z]+|postgres-[a-z]+)\//],
  ["HTTP server and validation", /node_modules\/(koa|@koa\/|koa-[a-z]+|ajv|fast-uri|raw-body|co-body|zod)\/|node:_http|node:internal\/http\b/],
  ["Chromium protocol (puppeteer)", /node_modules\/(puppeteer-core|debug|ws|chromium-bidi)\/|node:tty/],
  ["telemetry and logging", /node_modules\/(@opentelemetry\/|pino|sonic-boom|thread-stream)/],
  ["sockets, streams, buffers, events", /node:(net|buffer|events|stream|internal\/(streams|stream_base_commons|buffer|net|event_target))/],
  ["promises and timers", /node:(timers|internal\/(process\/task_queues|timers|async_hooks))/],
  ["Pressroom's code", /\/(services|packages)\/[^/]+\/dist\//],
];

function stageOf(functionName: string, url: string): string {
  if (functionName === "(garbage collector)") return "garbage collection";
  if (functionName === "(program)") return "V8 and Node's C++, unattributed";
  if (!url)
    return /^(write|writev|writeBuffer|writeUtf8String|writeLatin1String)$/.test(functionName)
      ? "socket and pipe writes"
      : "native calls (JSON, crypto, microtasks)";
  return STAGES.find(([, pattern]) => pattern.test(url))?.[0] ?? "other Node internals and libraries";
}

/** Each stage's share of the samples in which the thread was busy. */
function stageShares(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const counts = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples) {
    const frame = byId.get(id)!;
    if (frame.functionName === "(idle)" || frame.functionName === "(root)") continue;
    const stage = stageOf(frame.functionName, frame.url);
    counts.set(stage, (counts.get(stage) ?? 0) + 1);
    busy++;
  }
  return new Map([...counts].map(([stage, n]) => [stage, n / Math.max(1, busy)]));
}

async function profilesIn(dir: string, expected: number): Promise<Map<string, CpuProfile>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
    if (files.length >= expected) return new Map(files.map((f) => [f.split("-")[0]!, JSON.parse(readFileSync(path.join(dir, f), "utf8")) as CpuProfile]));
    if (Date.now() > deadline) throw new Error(`only ${files.length} of ${expected} profiles were written to ${dir}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Where each service's CPU goes per request, by stage (the library or layer
 * its sampled functions belong to): the per-stage budget behind the `cpu`
 * mode's totals. V8's sampling profiler sees the JavaScript thread; each
 * stage's share of its busy samples is applied to the process's CPU time
 * (all its threads, from /proc), so the columns add up to what the process
 * spent, GC helper threads and libuv's pool spread over the stages.
 */
export async function profile(count: number, concurrency = 4): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), "pressroom-profile-"));
  const stack = await startTestStack({
    env: {
      LOG_LEVEL: "warn",
      RENDER_SLOTS: String(concurrency),
      NODE_OPTIONS: `--require ${path.join(__dirname, "profile-preload.js")}`,
      PRESSROOM_PROFILE_DIR: dir,
    },
  });
  try {
    const keys = await benchKeys(stack, concurrency);
    const invoice = benchDocuments()[0]!;
    await runPressroom(stack.baseUrl, keys, invoice, concurrency, concurrency * 3);
    const pids = new Map<string, number>([...stack.services.processes].map(([name, p]) => [name, p.child.pid!]));
    const toggle = () => [...pids.values()].forEach((pid) => process.kill(pid, "SIGUSR2"));
    toggle();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = new Map([...pids].map(([name, pid]) => [name, procStat(pid).cpuMs]));
    const stats = await runPressroom(stack.baseUrl, keys, invoice, concurrency, count);
    const spent = new Map([...pids].map(([name, pid]) => [name, (procStat(pid).cpuMs - before.get(name)!) / stats.count]));
    toggle();
    const profiles = await profilesIn(dir, pids.size);
    const services = [...profiles.keys()].sort();
    const perService = new Map(services.map((s) => [s, stageShares(profiles.get(s)!)]));
    const stages = [...new Set([...perService.values()].flatMap((m) => [...m.keys()]))];
    const ms = (service: string, stage: string) => (perService.get(service)!.get(stage) ?? 0) * (spent.get(service) ?? 0);
    const rowTotal = (stage: string) => services.reduce((s, svc) => s + ms(svc, stage), 0);
    stages.sort((a, b) => rowTotal(b) - rowTotal(a));
    const cell = (v: number) => (v >= 0.05 ? v.toFixed(1) : "·");
    const lines = [
      `${invoice.name}, ${stats.count} requests (POST and download) at concurrency ${concurrency}, ${stats.throughput.toFixed(1)}/s under the profiler. ` +
        "CPU milliseconds per request, by stage (the sampling profiler itself costs some of it):",
      "",
      `| stage | ${services.join(" | ")} | all |`,
      `|---|${services.map(() => "---|").join("")}---|`,
      ...stages.map((stage) => `| ${stage} | ${services.map((s) => cell(ms(s, stage))).join(" | ")} | ${cell(rowTotal(stage))} |`),
      `| **all stages** | ${services.map((s) => cell(stages.reduce((t, stage) => t + ms(s, stage), 0))).join(" | ")} | ${cell(stages.reduce((t, stage) => t + rowTotal(stage), 0))} |`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    return lines.join("\n");
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
