import { chromiumArgs } from "@pressroom/render/engine";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import type { BenchDocument } from "./documents";
import { drive, type RunStats } from "./stats";

/**
 * The floor: a bare puppeteer-core loop on pre-opened pages, one per
 * concurrent job (each in its own browser context), with the engine's
 * Chromium flags and no isolation between renders. Nothing can be faster here.
 */
export class Floor {
  private constructor(
    private readonly browser: Browser,
    private readonly pages: Page[],
  ) {}

  static async start(executablePath: string, concurrency: number): Promise<Floor> {
    const browser = await puppeteer.launch({
      executablePath,
      headless: "shell",
      pipe: true,
      args: chromiumArgs({ sandbox: false, rendererHeapMiB: 512 }),
    });
    const pages: Page[] = [];
    for (let i = 0; i < concurrency; i++) {
      const context = await browser.createBrowserContext();
      pages.push(await context.newPage());
    }
    return new Floor(browser, pages);
  }

  private async renderOnce(page: Page, doc: BenchDocument): Promise<Uint8Array> {
    if (doc.kind === "png") {
      await page.setViewport({ width: doc.image!.width, height: doc.image!.height });
      await page.setContent(doc.html, { waitUntil: "load" });
      return page.screenshot({ type: "png", optimizeForSpeed: true, clip: { x: 0, y: 0, width: doc.image!.width, height: doc.image!.height } });
    }
    await page.setContent(doc.html, { waitUntil: "load" });
    const pdf = doc.pdf!;
    return page.pdf({
      format: pdf.format as "A4",
      landscape: pdf.landscape,
      margin: { top: pdf.marginTop, right: pdf.marginRight, bottom: pdf.marginBottom, left: pdf.marginLeft },
      printBackground: true,
      displayHeaderFooter: Boolean(pdf.headerTemplate || pdf.footerTemplate),
      headerTemplate: pdf.headerTemplate || "<span></span>",
      footerTemplate: pdf.footerTemplate || "<span></span>",
    });
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
