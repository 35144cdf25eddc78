import { performance } from "node:perf_hooks";
import { startTestStack } from "@pressroom/stack";
import { benchDocuments, type BenchDocument } from "./documents";
import { benchKeys, renderThroughPressroom } from "./pressroom";
import { runTasks } from "./stats";

/**
 * Documents per second of a batch (POST /v1/batches, then its items' pages and every
 * download) against the same documents sent one by one (POST /v1/render, then the download)
 * at each concurrency of `singleConcurrency`, in alternating rounds, so that other load on the
 * machine weighs on all of them alike. The batch's key runs its items within its concurrency
 * (business: 10); the one-by-one requests use as many clients as their concurrency, each on its
 * own business key, so no per-key rate limit is reached.
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

    const rates = new Map<string, number[]>();
    const record = (name: string, docsPerSecond: number) => {
      rates.set(name, [...(rates.get(name) ?? []), docsPerSecond]);
      process.stdout.write(`${name}: ${docsPerSecond.toFixed(1)} documents/s\n`);
    };
    for (let round = 0; round < rounds; round++) {
      const runs = [
        { name: `batch of ${items}`, run: () => runBatch(stack.baseUrl, batchKey, doc, items) },
        ...singleConcurrency.map((c) => ({ name: `one by one, concurrency ${c}`, run: () => runSingles(stack.baseUrl, singleKeys, doc, items, c) })),
      ];
      // Alternate which runs first.
      if (round % 2 === 1) runs.reverse();
      for (const { name, run } of runs) record(name, await run());
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
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
    ].join("\n");
  } finally {
    await stack.stop();
  }
}

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
  // Pages are read as items end, and each output is downloaded as soon as its item has succeeded.
  while (next < count) {
    const page = (await (await fetch(`${baseUrl}/v1/batches/${batch.id}/items?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { headers })).json()) as {
      data: { index: number; status: string; url?: string }[];
      next_cursor: string | null;
    };
    const ready = page.data.filter((item) => item.index >= next);
    let advanced = 0;
    for (const item of ready) {
      if (item.status === "failed") throw new Error(`batch item ${item.index} failed`);
      if (item.status !== "succeeded") break;
      downloads.push(download(item.url!, doc));
      advanced++;
    }
    next += advanced;
    if (advanced === ready.length && page.next_cursor) cursor = page.next_cursor;
    else if (next < count) await new Promise((resolve) => setTimeout(resolve, 200));
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
