import { chromiumArgs } from "@pressroom/render/engine";
import puppeteer, { type Browser, type CDPSession, type Page } from "puppeteer-core";
import type { BenchDocument } from "./documents";
import { drive, type RunStats } from "./stats";

/**
 * Two floors. The hot floor: a bare puppeteer-core loop on pre-opened pages, one per concurrent
 * job (each in its own browser context), with the engine's Chromium flags and no isolation
 * between renders: nothing can be faster here. The safe floor: the same pages, but each job
 * navigates to a new https origin of its own (answered by request interception) and clears the
 * cookies after: the least a multi-tenant service must pay for one document not to see the last.
 */
export type FloorKind = "hot" | "safe";

interface FloorPage {
  page: Page;
  cdp: CDPSession;
  /** The HTML the page's next navigation is answered with (the safe floor). */
  html: string;
}

export class Floor {
  private jobs = 0;

  private constructor(
    private readonly browser: Browser,
    private readonly pages: FloorPage[],
    private readonly kind: FloorKind,
  ) {}

  static async start(executablePath: string, concurrency: number, kind: FloorKind = "hot"): Promise<Floor> {
    const browser = await puppeteer.launch({
      executablePath,
      headless: "shell",
      pipe: true,
      args: chromiumArgs({ sandbox: false, rendererHeapMiB: 512 }),
    });
    const pages: FloorPage[] = [];
    for (let i = 0; i < concurrency; i++) {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      const floorPage: FloorPage = { page, cdp: await page.createCDPSession(), html: "" };
      if (kind === "safe") {
        await page.setRequestInterception(true);
        page.on("request", (request) => {
          if (request.isNavigationRequest()) void request.respond({ status: 200, contentType: "text/html; charset=utf-8", body: floorPage.html });
          else void request.abort();
        });
      }
      pages.push(floorPage);
    }
    return new Floor(browser, pages, kind);
  }

  /** The document in the page: set as content (hot), or answered at a new origin of its own (safe). */
  private async load(floorPage: FloorPage, html: string): Promise<void> {
    if (this.kind === "hot") {
      await floorPage.page.setContent(html, { waitUntil: "load" });
      return;
    }
    floorPage.html = html;
    await floorPage.page.goto(`https://job-${++this.jobs}.floor.test/`, { waitUntil: "load" });
  }

  private async renderOnce(floorPage: FloorPage, doc: BenchDocument): Promise<Uint8Array> {
    const { page } = floorPage;
    if (doc.kind === "png") {
      await page.setViewport({ width: doc.image!.width, height: doc.image!.height });
      await this.load(floorPage, doc.html);
      return page.screenshot({ type: "png", optimizeForSpeed: true, clip: { x: 0, y: 0, width: doc.image!.width, height: doc.image!.height } });
    }
    await this.load(floorPage, doc.html);
    const pdf = doc.pdf!;
    const out = await page.pdf({
      format: pdf.format as "A4",
      landscape: pdf.landscape,
      margin: { top: pdf.marginTop, right: pdf.marginRight, bottom: pdf.marginBottom, left: pdf.marginLeft },
      printBackground: true,
      displayHeaderFooter: Boolean(pdf.headerTemplate || pdf.footerTemplate),
      headerTemplate: pdf.headerTemplate || "<span></span>",
      footerTemplate: pdf.footerTemplate || "<span></span>",
    });
    if (this.kind === "safe") await floorPage.cdp.send("Network.clearBrowserCookies");
    return out;
  }

  run(doc: BenchDocument, concurrency: number, count: number): Promise<RunStats> {
    return drive(concurrency, count, 2, (worker) => this.renderOn(worker, doc));
  }

  /** One render on the worker's page. */
  async renderOn(worker: number, doc: BenchDocument): Promise<void> {
    const out = await this.renderOnce(this.pages[worker]!, doc);
    if (out.byteLength < 100) throw new Error("empty output");
  }

  /** The browser's pid, which is also its process group's. */
  pid(): number | undefined {
    return this.browser.process()?.pid;
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}
