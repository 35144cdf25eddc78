import { performance } from "node:perf_hooks";
import { startTestStack } from "@pressroom/stack";
import { benchDocuments, type BenchDocument } from "./documents";
import { pressroomCpu, type CpuSample } from "./efficiency";
import { benchKeys, renderThroughPressroom } from "./pressroom";
import { median, runTasks } from "./stats";

/**
 * Documents per second of a batch (POST /v1/batches, then its items' pages and every
 * download) against the same documents sent one by one (POST /v1/render, then the download)
 * at each concurrency of `singleConcurrency`, in alternating rounds, so that other load on the
 * machine weighs on all of them alike. The batch's key runs its items within its concurrency
 * (business: 10); the one-by-one requests use as many clients as their concurrency, each on its
 * own business key, so no per-key rate limit is reached. Each run's CPU per document is taken by
 * process group (efficiency.ts's pressroomCpu: exited renderers counted), for where the two differ.
 */
export async function batchBench(items: number, rounds: number, singleConcurrency: number[]): Promise<string> {
  const doc = benchDocuments()[0]!;
  const stack = await startTestStack({ env: { LOG_LEVEL: "warn", RENDER_SLOTS: "4" } });
  try {
    const keys = await benchKeys(stack, Math.max(...singleConcurrency) + 1);
    const batchKey = keys[0]!;
    const singleKeys = keys.slice(1);
    // Warm every path once.
    await runBatch(stack.baseUrl, batchKey, doc, 8);
    await runSingles(stack.baseUrl, singleKeys, doc, 8, 4);

    const cpu = pressroomCpu(stack);
    const rates = new Map<string, number[]>();
    const cpuPerDocument = new Map<string, CpuSample[]>();
    const measured = async (name: string, run: () => Promise<number>) => {
      const before = cpu();
      const docsPerSecond = await run();
      const after = cpu();
      const perDocument: CpuSample = new Map([...after].map(([group, ms]) => [group, (ms - (before.get(group) ?? 0)) / items]));
      rates.set(name, [...(rates.get(name) ?? []), docsPerSecond]);
      cpuPerDocument.set(name, [...(cpuPerDocument.get(name) ?? []), perDocument]);
      const total = [...perDocument.values()].reduce((sum, ms) => sum + ms, 0);
      process.stdout.write(`${name}: ${docsPerSecond.toFixed(1)} documents/s, ${total.toFixed(0)} ms CPU per document\n`);
    };
    for (let round = 0; round < rounds; round++) {
      const runs = [
        { name: `batch of ${items}`, run: () => runBatch(stack.baseUrl, batchKey, doc, items) },
        ...singleConcurrency.map((c) => ({ name: `one by one, concurrency ${c}`, run: () => runSingles(stack.baseUrl, singleKeys, doc, items, c) })),
      ];
      // Alternate which runs first.
      if (round % 2 === 1) runs.reverse();
      for (const { name, run } of runs) await measured(name, run);
    }
    const lines = [...rates.entries()].map(([name, values]) => `| ${name} | ${values.map((v) => v.toFixed(1)).join(", ")} | ${median(values).toFixed(1)} |`);
    // The best one-by-one concurrency by its median; the batch against it round by round (each round's two runs saw the same
    // load on the machine), and the median of those ratios.
    const [, best] = [...rates.entries()].filter(([name]) => !name.startsWith("batch")).sort(([, a], [, b]) => median(b) - median(a))[0]!;
    const batch = [...rates.entries()].find(([name]) => name.startsWith("batch"))![1];
    const ratios = batch.map((rate, round) => rate / best[round]!);
    return [
      `${doc.name}, ${items} documents per run, ${rounds} rounds; every output downloaded and checked. Render pool: 4 slots.`,
      "",
      "| run | documents/s per round | median |",
      "|---|---|---|",
      ...lines,
      "",
      `Batch against the best one-by-one concurrency, round by round: ${ratios.map((r) => r.toFixed(2)).join(", ")}; median ${median(ratios).toFixed(2)} ×.`,
      "",
      ...cpuTable(cpuPerDocument),
    ].join("\n");
  } finally {
    await stack.stop();
  }
}

/** CPU ms per document by process group (rows) and run (columns), each the median of the rounds; the groups by the batch's cost. */
function cpuTable(perRun: Map<string, CpuSample[]>): string[] {
  const runs = [...perRun.keys()];
  const groups = [...new Set([...perRun.values()].flatMap((samples) => samples.flatMap((sample) => [...sample.keys()])))];
  const cell = (run: string, group?: string) =>
    median(perRun.get(run)!.map((sample) => (group === undefined ? [...sample.values()].reduce((sum, ms) => sum + ms, 0) : (sample.get(group) ?? 0))));
  groups.sort((a, b) => cell(runs[0]!, b) - cell(runs[0]!, a));
  return [
    "CPU ms per document by process group (median of the rounds):",
    "",
    `| group | ${runs.join(" | ")} |`,
    `|---|${runs.map(() => "---:").join("|")}|`,
    ...groups.map((group) => `| ${group} | ${runs.map((run) => cell(run, group).toFixed(1)).join(" | ")} |`),
    `| total | ${runs.map((run) => cell(run).toFixed(1)).join(" | ")} |`,
  ];
}

/** Items read per page of GET /v1/batches/{id}/items (its largest). */
const PAGE = 100;

/** One batch of `count` copies of the document, from its POST until every output is downloaded; returns documents per second. */
async function runBatch(baseUrl: string, apiKey: string, doc: BenchDocument, count: number): Promise<number> {
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  const kind = doc.endpoint === "/v1/image" ? "image" : "render";
  const started = performance.now();
  const created = await fetch(`${baseUrl}/v1/batches`, {
    method: "POST",
    headers,
    body: JSON.stringify({ items: Array.from({ length: count }, () => ({ kind, template_id: doc.templateId, data: doc.data })) }),
  });
  const batch = (await created.json()) as { id: string; code?: string };
  if (created.status !== 202) throw new Error(`batch refused: ${created.status} ${batch.code}`);
  const downloads: Promise<void>[] = [];
  let cursor: string | null = null;
  let next = 0;
  // As a poller would: the batch's counts (one row) every 200 ms, and a page of items read once as
  // many items have ended as the page holds, each succeeded output downloaded from it at once.
  while (next < count) {
    const { counts } = (await (await fetch(`${baseUrl}/v1/batches/${batch.id}`, { headers })).json()) as { counts: Record<string, number> };
    if (counts.failed! > 0) throw new Error(`${counts.failed} batch items failed`);
    if (counts.succeeded! < Math.min(count, next + PAGE)) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    const page = (await (await fetch(`${baseUrl}/v1/batches/${batch.id}/items?limit=${PAGE}${cursor ? `&cursor=${cursor}` : ""}`, { headers })).json()) as {
      data: { index: number; status: string; url?: string }[];
      next_cursor: string | null;
    };
    const ready = page.data.filter((item) => item.index >= next);
    let advanced = 0;
    for (const item of ready) {
      if (item.status !== "succeeded") break;
      downloads.push(download(item.url!, doc));
      advanced++;
    }
    next += advanced;
    if (advanced === ready.length && page.next_cursor) cursor = page.next_cursor;
    // Counted items that ended ahead of one still running.
    else if (advanced < ready.length) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await Promise.all(downloads);
  return (count / (performance.now() - started)) * 1000;
}

async function download(url: string, doc: BenchDocument): Promise<void> {
  const response = await fetch(url);
  const bytes = Buffer.from(await response.arrayBuffer());
  const magic = bytes.subarray(0, 4).toString("latin1");
  if (response.status !== 200 || (doc.kind === "pdf" ? magic !== "%PDF" : magic !== "\x89PNG")) throw new Error(`download failed: ${response.status}`);
}

/** `count` documents one request each, `concurrency` at a time; returns documents per second. */
async function runSingles(baseUrl: string, keys: string[], doc: BenchDocument, count: number, concurrency: number): Promise<number> {
  const started = performance.now();
  await runTasks(
    concurrency,
    count,
    (worker) => renderThroughPressroom(baseUrl, keys[worker % keys.length]!, doc),
    () => undefined,
  );
  return (count / (performance.now() - started)) * 1000;
}
