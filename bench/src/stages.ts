import { startTestStack } from "@pressroom/stack";
import { benchDocuments } from "./documents";
import { benchKeys } from "./pressroom";
import { percentile } from "./stats";

interface JobView {
  id: string;
  url: string;
  events: { type: string; time: string }[];
}

const STAGES = ["gateway, before acceptance", "queue (accepted → started)", "worker (render + store)", "gateway, after success", "POST total", "download"] as const;

/**
 * Where the time of one request goes, one request at a time on one render
 * slot: the job's own event times (accepted by the gateway, started and
 * succeeded by the worker; all processes share this machine's clock) split
 * the POST, and the download of the signed URL is timed on its own.
 */
export async function stages(count: number): Promise<string> {
  const stack = await startTestStack({ env: { LOG_LEVEL: "warn", RENDER_SLOTS: "1" } });
  try {
    const [key] = await benchKeys(stack, 1);
    const lines = [`${count} requests per document, one at a time, after 5 warm-up requests; p50 (p90) in ms:`, "", `| document | ${STAGES.join(" | ")} |`, `|---|${STAGES.map(() => "---").join("|")}|`];
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
        const job = (await (await fetch(`${stack.baseUrl}/v1/jobs/${posted.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as JobView;
        const at = (type: string) => Date.parse(job.events.find((e) => e.type === type)!.time);
        if (i < 5) continue;
        [at("job.accepted") - sent, at("job.started") - at("job.accepted"), at("job.succeeded") - at("job.started"), answered - at("job.succeeded"), t1 - t0, t2 - t1].forEach((v, k) =>
          samples[k]!.push(v),
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
    await stack.stop();
  }
}
