import { connectNats, createLogger } from "@pressroom/platform";
import { readJobEvents } from "@pressroom/domain";
import { RenderEngine } from "@pressroom/render/engine";
import { startTestStack } from "@pressroom/stack";
import { benchDocuments } from "./documents";
import { benchKeys } from "./pressroom";
import { percentile } from "./stats";

const STAGES = [
  "gateway, before acceptance",
  "queue (accepted → started)",
  "worker: render",
  "engine alone: render",
  "worker: rest (store, events)",
  "gateway, after success",
  "POST total",
  "download",
] as const;

/** When each of a finished job's events was stamped (ms since the epoch), and the engine's render time. */
export async function jobTimeline(
  jsm: Parameters<typeof readJobEvents>[0],
  jobId: string,
): Promise<{ accepted: number; started: number; succeeded: number; renderMs: number }> {
  const events = (await readJobEvents(jsm, jobId)).map((e) => e.event);
  const find = (type: string) => events.find((e) => e.type === type)!;
  const succeeded = find("job.succeeded");
  return {
    accepted: Date.parse(find("job.accepted").time),
    started: Date.parse(find("job.started").time),
    succeeded: Date.parse(succeeded.time),
    renderMs: succeeded.succeeded!.renderMs,
  };
}

/**
 * Where the time of one request goes, one request at a time on one render
 * slot: the job's own events, read from its stream (times stamped by the
 * gateway and the worker, which share this machine's clock, and the engine's
 * render time), split the POST; the download of the signed URL is timed on
 * its own. After each request, the engine alone (started in this process on
 * the same Chromium, one slot, no service around it) renders the same job:
 * its render time, taken in the same rounds, is what the worker's would be
 * without the service, whatever this machine's speed at the moment.
 */
export async function stages(executablePath: string, count: number): Promise<string> {
  const stack = await startTestStack({ env: { LOG_LEVEL: "warn", RENDER_SLOTS: "1" } });
  const engine = await RenderEngine.start({ executablePath, slots: 1 });
  const nc = await connectNats({ url: stack.natsUrl, name: "bench-stages", logger: createLogger("bench", "silent") });
  try {
    const jsm = await nc.jetstreamManager();
    const [key] = await benchKeys(stack, 1);
    const lines = [
      `${count} requests per document, one at a time, after 5 warm-up requests; p50 (p90) in ms:`,
      "",
      `| document | ${STAGES.join(" | ")} |`,
      `|---|${STAGES.map(() => "---").join("|")}|`,
    ];
    for (const doc of benchDocuments()) {
      const samples = STAGES.map(() => [] as number[]);
      for (let i = 0; i < count + 5; i++) {
        const sent = Date.now();
        const t0 = performance.now();
        const response = await fetch(`${stack.baseUrl}${doc.endpoint}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ template_id: doc.templateId, data: doc.data }),
        });
        const posted = (await response.json()) as { id: string; url: string };
        const t1 = performance.now();
        const answered = Date.now();
        if (response.status !== 200) throw new Error(`POST ${doc.endpoint} answered ${response.status}`);
        const download = await fetch(posted.url);
        await download.arrayBuffer();
        const t2 = performance.now();
        const alone = await engine.render(doc.job);
        if (i < 5) continue;
        const { accepted, started, succeeded, renderMs } = await jobTimeline(jsm, posted.id);
        [accepted - sent, started - accepted, renderMs, alone.renderMs, succeeded - started - renderMs, answered - succeeded, t1 - t0, t2 - t1].forEach(
          (v, k) => samples[k]!.push(v),
        );
      }
      const cell = (values: number[]) => {
        const sorted = [...values].sort((a, b) => a - b);
        return `${percentile(sorted, 50).toFixed(0)} (${percentile(sorted, 90).toFixed(0)})`;
      };
      const line = `| ${doc.name} | ${samples.map(cell).join(" | ")} |`;
      process.stdout.write(`${line}\n`);
      lines.push(line);
    }
    return lines.join("\n");
  } finally {
    await nc.close();
    await engine.close();
    await stack.stop();
  }
}
