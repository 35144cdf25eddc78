import { CLEARED_STORAGE, chromiumArgs } from "@pressroom/render/engine";
import puppeteer from "puppeteer-core";
import type { BenchDocument } from "./documents";
import { groupCpuMs } from "./engine";
import { median } from "./stats";

/** Calls of one kind per round: enough for 10 ms CPU ticks to resolve a tenth of a millisecond per call. */
const CALLS = 300;

/**
 * What each DevTools call of the engine's per-job wipe (page.ts clearJobState), and the two it no
 * longer sends, costs: Chromium's CPU (its whole process group, exited members included) and the
 * driver's, per call, on a page of one browser context that printed `doc`. The kinds alternate
 * within each of `rounds` rounds; the table gives each kind's median over the rounds. The launch
 * is left out: only each round's calls are counted.
 */
export async function wipeCallsBench(executablePath: string, doc: BenchDocument, rounds: number): Promise<string> {
  const browser = await puppeteer.launch({ executablePath, headless: "shell", pipe: true, args: chromiumArgs({ sandbox: false, rendererHeapMiB: 512 }) });
  try {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.setContent(doc.html, { waitUntil: "load" });
    await page.pdf();
    const session = await page.createCDPSession();
    const browserSession = await browser.target().createCDPSession();
    let origins = 0;
    const kinds: [string, () => Promise<unknown>][] = [
      ["Network.clearBrowserCache (no longer sent)", () => session.send("Network.clearBrowserCache")],
      ["Browser.resetPermissions (no longer sent)", () => browserSession.send("Browser.resetPermissions", { browserContextId: context.id })],
      ["Page.resetNavigationHistory", () => session.send("Page.resetNavigationHistory")],
      ["Network.clearBrowserCookies", () => session.send("Network.clearBrowserCookies")],
      ["Runtime.evaluate window.name = ''", () => session.send("Runtime.evaluate", { expression: "window.name = ''" })],
      [
        "Storage.clearDataForOrigin, per origin the job reached",
        () =>
          session.send("Storage.clearDataForOrigin", {
            origin: `https://o${origins++}.document.pressroom.invalid`,
            storageTypes: CLEARED_STORAGE,
          }),
      ],
    ];
    const perCall = new Map<string, number[]>(kinds.map(([name]) => [name, []]));
    const pgid = browser.process()?.pid;
    for (let round = 0; round < rounds; round++) {
      for (const [name, call] of kinds) {
        const chromium0 = groupCpuMs(pgid);
        const node0 = process.cpuUsage();
        for (let i = 0; i < CALLS; i++) await call();
        const node = process.cpuUsage(node0);
        perCall.get(name)!.push((groupCpuMs(pgid) - chromium0 + (node.user + node.system) / 1000) / CALLS);
      }
    }
    return [
      `${rounds} rounds, each ${CALLS} calls of every kind in turn, on the page of one browser context that printed the ${doc.name}; CPU of Chromium's process group and of the driver, per call.`,
      "",
      "| call | CPU per call, median | each round |",
      "|---|---:|---|",
      ...kinds.map(([name]) => {
        const values = perCall.get(name)!;
        return `| ${name} | ${median(values).toFixed(2)} ms | ${values.map((v) => v.toFixed(2)).join(", ")} |`;
      }),
    ].join("\n");
  } finally {
    await browser.close();
  }
}
