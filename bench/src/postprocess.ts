import { readFileSync } from "node:fs";
import type { RenderOptions } from "@pressroom/domain";
import { RenderEngine } from "@pressroom/render/engine";
import { merge, postProcess, postProcessingOf } from "@pressroom/render/postprocess";
import type { BenchDocument } from "./documents";
import { percentile } from "./stats";

/** USER_HZ on Linux: /proc reports CPU time in ticks of 10 ms. */
const TICK_MS = 10;

/** CPU of this process and of its children that have exited (qpdf, gs), in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // cutime and cstime: the 16th and 17th fields of stat, 14th and 15th after the command.
  return (user + system) / 1000 + (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

const OPTIONS: [string, RenderOptions][] = [
  ["metadata", { metadata: { title: "Invoice", author: "Pressroom", subject: "Bench", keywords: ["a", "b"], creator: "bench" } }],
  ["watermark", { watermark: { text: "CONFIDENTIAL" } }],
  ["pdfua", { pdfua: true }],
  [
    "encrypt",
    { encrypt: { userPassword: "bench-user", ownerPassword: "bench-owner", permissions: { print: true, copy: false, modify: false, annotate: false } } },
  ],
  ["pdfa (PDF/A-2b)", { pdfa: "PDF/A-2b" }],
  ["pdfa (PDF/A-1b)", { pdfa: "PDF/A-1b" }],
];

/**
 * What each post-processing option costs on top of the render: the document printed once by
 * the engine, then each option applied `count` times in turn (one at a time, alternating, so
 * a slow moment of the machine weighs on all alike): wall time per document (p50, p99) and CPU
 * per document, this process's and its tools' (qpdf, Ghostscript). A merge of 3 and of 20
 * copies of the document is the cost of `documents` beyond rendering its parts.
 */
export async function postprocessBench(executablePath: string, doc: BenchDocument, count: number): Promise<string> {
  const engine = await RenderEngine.start({ executablePath, slots: 1 });
  let printed: Uint8Array;
  let pages: number;
  try {
    const out = await engine.render(doc.job);
    printed = out.data;
    pages = out.pages;
  } finally {
    await engine.close();
  }
  /** A minute and 500 MiB: limits no variant here comes near, so that what is measured is the work. */
  const limits = () => ({ deadlineAt: performance.now() + 60_000, maxOutputBytes: 500 * 1024 * 1024 });
  const mergeOf = (parts: number) => () =>
    merge(async (add) => {
      for (let i = 0; i < parts; i++) await add(printed);
    }, limits());
  const variants: [string, () => Promise<unknown>][] = [
    ...OPTIONS.map(([name, options]): [string, () => Promise<unknown>] => {
      const steps = postProcessingOf(options);
      return [name, () => postProcess(printed, steps, limits())];
    }),
    ["merge of 3 (documents)", mergeOf(3)],
    ["merge of 20 (documents)", mergeOf(20)],
  ];
  const results = new Map(variants.map(([name]) => [name, { wall: [] as number[], cpu: 0 }]));
  for (const [, run] of variants) await run();
  for (let i = 0; i < count; i++) {
    for (const [name, run] of variants) {
      const cpu0 = cpuMs();
      const t0 = performance.now();
      await run();
      const r = results.get(name)!;
      r.wall.push(performance.now() - t0);
      r.cpu += cpuMs() - cpu0;
    }
  }
  const rows = variants.map(([name]) => {
    const r = results.get(name)!;
    const sorted = [...r.wall].sort((a, b) => a - b);
    return `| ${name} | ${percentile(sorted, 50).toFixed(0)} ms | ${percentile(sorted, 99).toFixed(0)} ms | ${(r.cpu / count).toFixed(0)} ms |`;
  });
  return [
    `${doc.name}: ${printed.byteLength} bytes, ${pages} page(s) as printed; each option applied ${count} times, one at a time.`,
    "",
    "| option | p50 | p99 | CPU per document |",
    "|---|---|---|---|",
    ...rows,
  ].join("\n");
}
