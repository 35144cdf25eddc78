/**
 * Micro-benchmark of the render engine against the floor (a bare puppeteer
 * loop: setContent + pdf on pre-opened pages, no isolation, no interception).
 *
 *   node --import tsx src/engine/bench-engine.ts [renders=150]
 *
 * Prints p50/p99 latency and renders/s at 1, 2 and 4 concurrent renders for the
 * bare loop and for both isolation strategies. Results are in README.md.
 */
import { readFileSync, readdirSync } from "node:fs";
import puppeteer from "puppeteer-core";
import { DEFAULT_CHROMIUM_PATH, chromiumArgs } from "./chromium";
import { RenderEngine } from "./engine";
import type { IsolationStrategy } from "./types";

const EXECUTABLE = process.env.CHROMIUM_PATH ?? DEFAULT_CHROMIUM_PATH;
const RENDERS = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 150);
const WARMUP = 8;
const CONCURRENCY = [1, 2, 4];

/** A one-page invoice: a styled table, an inline SVG logo, no network. */
const INVOICE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Invoice INV-2041</title>
<style>
  @page { size: A4; margin: 16mm 14mm; }
  body { font-family: "DejaVu Sans", Arial, sans-serif; color: #1f2933; font-size: 11px; }
  header { display: flex; justify-content: space-between; align-items: center; border-bottom: 2px solid #3e4c59; padding-bottom: 8px; }
  h1 { font-size: 22px; margin: 0; letter-spacing: .5px; }
  .meta { text-align: right; line-height: 1.5; }
  .parties { display: flex; gap: 40px; margin: 18px 0; }
  .parties div { flex: 1; line-height: 1.5; }
  table { width: 100%; border-collapse: collapse; }
  th { background: #e4e7eb; text-align: left; padding: 6px; font-weight: 600; }
  td { padding: 5px 6px; border-bottom: 1px solid #e4e7eb; }
  td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
  tr:nth-child(even) td { background: #f5f7fa; }
  .totals { margin-top: 12px; margin-left: auto; width: 40%; }
  .totals td { border: 0; }
  .grand td { font-weight: 700; font-size: 13px; border-top: 2px solid #3e4c59; }
  footer { margin-top: 24px; color: #7b8794; font-size: 9px; }
</style></head>
<body>
<header>
  <svg width="120" height="36" viewBox="0 0 120 36"><rect width="36" height="36" rx="6" fill="#3e4c59"/><text x="44" y="24" font-size="16" fill="#3e4c59">Acme Ltd</text></svg>
  <div class="meta"><h1>INVOICE</h1>No. INV-2041<br>Issued 2026-11-21<br>Due 2026-12-21</div>
</header>
<section class="parties">
  <div><strong>From</strong><br>Acme Ltd<br>1 Foundry Lane<br>Bristol BS1 4AA<br>VAT GB123456789</div>
  <div><strong>Bill to</strong><br>Ada Lovelace<br>12 Analytical Street<br>London W1 2AB<br>ada@example.com</div>
</section>
<table>
  <thead><tr><th>#</th><th>Description</th><th class="n">Qty</th><th class="n">Unit</th><th class="n">Amount</th></tr></thead>
  <tbody>
${Array.from({ length: 24 }, (_, i) => `    <tr><td>${i + 1}</td><td>Engineering services, milestone ${i + 1} (design, review and delivery)</td><td class="n">${(i % 5) + 1}</td><td class="n">${(120 + i * 7).toFixed(2)}</td><td class="n">${(((i % 5) + 1) * (120 + i * 7)).toFixed(2)}</td></tr>`).join("\n")}
  </tbody>
</table>
<table class="totals">
  <tr><td>Subtotal</td><td class="n">9,876.00</td></tr>
  <tr><td>VAT 20%</td><td class="n">1,975.20</td></tr>
  <tr class="grand"><td>Total</td><td class="n">GBP 11,851.20</td></tr>
</table>
<footer>Payment by bank transfer to Acme Ltd, sort code 00-00-00, account 12345678. Thank you for your business.</footer>
</body></html>`;

interface Variant {
  name: string;
  concurrency: number;
  once: (worker: number) => Promise<unknown>;
  close: () => Promise<void>;
  /** Resolves once the variant's background work (wipes, page preparation) is done. */
  settle: () => Promise<void>;
  /** The browser's pid (its process group), for CPU accounting. */
  pid: () => number | undefined;
  latencies: number[];
  elapsedMs: number;
  cpuMs: number;
  renders: number;
}

interface Result {
  name: string;
  concurrency: number;
  p50: number;
  p99: number;
  perSecond: number;
  cpuPerRender: number;
}

const TICK_MS = 10; // USER_HZ = 100 on Linux

/**
 * CPU time of a browser's whole process group, including exited processes its
 * members reaped (a fresh context's renderer is reaped by the zygote). Robust
 * to other load on the machine, unlike wall-clock numbers.
 */
function groupCpuMs(pgid: number | undefined): number {
  if (!pgid) return 0;
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue; // pgrp
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks * TICK_MS;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

/** `count` calls of `once`, `concurrency` at a time; adds to the variant's totals. */
async function burst(v: Variant, count: number, record: boolean): Promise<void> {
  let started = 0;
  const pid = v.pid();
  const cpu0 = groupCpuMs(pid);
  const node0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: v.concurrency }, async (_, w) => {
      while (started < count) {
        started++;
        const s = performance.now();
        await v.once(w);
        if (record) v.latencies.push(performance.now() - s);
      }
    }),
  );
  // Background work a burst leaves behind is part of its cost, and must not run into the next burst.
  await v.settle();
  if (record) {
    v.elapsedMs += performance.now() - t0;
    const node = process.cpuUsage(node0);
    v.cpuMs += groupCpuMs(pid) - cpu0 + (node.user + node.system) / 1000;
    v.renders += count;
  }
}

async function bare(concurrency: number): Promise<Variant> {
  const browser = await puppeteer.launch({
    executablePath: EXECUTABLE,
    headless: "shell",
    pipe: true,
    args: chromiumArgs({ sandbox: false, rendererHeapMiB: 512 }),
  });
  // One context per page: two pages of one context can stall each other.
  const pages = await Promise.all(Array.from({ length: concurrency }, async () => (await browser.createBrowserContext()).newPage()));
  return {
    name: "bare setContent+pdf",
    concurrency,
    once: async (w) => {
      const page = pages[w]!;
      await page.setContent(INVOICE, { waitUntil: "load" });
      await page.pdf({ format: "A4", printBackground: true });
    },
    close: () => browser.close(),
    settle: async () => undefined,
    pid: () => browser.process()?.pid,
    latencies: [],
    elapsedMs: 0,
    cpuMs: 0,
    renders: 0,
  };
}

async function engine(isolation: IsolationStrategy, concurrency: number): Promise<Variant> {
  const e = await RenderEngine.start({ executablePath: EXECUTABLE, slots: concurrency, isolation });
  return {
    name: `engine ${isolation}`,
    concurrency,
    once: () => e.render({ html: INVOICE, kind: "pdf" }),
    close: () => e.close(),
    settle: async () => {
      while (e.stats().preparing > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    },
    pid: () => e.stats().browserPid,
    latencies: [],
    elapsedMs: 0,
    cpuMs: 0,
    renders: 0,
  };
}

/**
 * The three variants of one concurrency level run in alternating short bursts,
 * so that load from other tenants of the machine falls on all of them alike.
 */
async function level(concurrency: number): Promise<Result[]> {
  const variants = [await bare(concurrency), await engine("reuse", concurrency), await engine("fresh", concurrency)];
  try {
    for (const v of variants) await burst(v, WARMUP, false);
    const perBurst = Math.max(concurrency * 5, 10);
    for (let done = 0; done < RENDERS; done += perBurst) {
      for (const v of variants) await burst(v, Math.min(perBurst, RENDERS - done), true);
    }
  } finally {
    await Promise.all(variants.map((v) => v.close()));
  }
  return variants.map((v) => {
    const sorted = [...v.latencies].sort((a, b) => a - b);
    const r = {
      name: v.name,
      concurrency,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      perSecond: (v.renders / v.elapsedMs) * 1000,
      cpuPerRender: v.cpuMs / v.renders,
    };
    process.stdout.write(
      `${r.name.padEnd(20)} c=${concurrency}  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  ` +
        `${r.perSecond.toFixed(1).padStart(5)} renders/s  ${r.cpuPerRender.toFixed(0).padStart(4)} ms CPU/render\n`,
    );
    return r;
  });
}

async function main(): Promise<void> {
  process.stdout.write(`${RENDERS} renders per row after ${WARMUP} warm-up, ${EXECUTABLE}, load ${readFileSync("/proc/loadavg", "utf8").split(" ")[0]}\n`);
  const results: Result[] = [];
  for (const c of CONCURRENCY) results.push(...(await level(c)));

  const bareBest = Math.max(...results.filter((r) => r.name.startsWith("bare")).map((r) => r.perSecond));
  const bare1 = results.find((r) => r.name.startsWith("bare") && r.concurrency === 1)!;
  for (const strategy of ["reuse", "fresh"]) {
    const at1 = results.find((r) => r.name === `engine ${strategy}` && r.concurrency === 1)!;
    const at4 = results.find((r) => r.name === `engine ${strategy}` && r.concurrency === 4)!;
    process.stdout.write(
      `${strategy}: p50 at c=1 is ${((at1.p50 / bare1.p50 - 1) * 100).toFixed(0)}% over bare; ` +
        `throughput at 4 slots is ${(at4.perSecond / bareBest).toFixed(2)}x bare's best (${bareBest.toFixed(1)}/s); ` +
        `CPU per render ${(at1.cpuPerRender / bare1.cpuPerRender).toFixed(2)}x bare's\n`,
    );
  }
  process.stdout.write(`load at the end ${readFileSync("/proc/loadavg", "utf8").split(" ")[0]}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
