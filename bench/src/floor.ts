import puppeteer, { type Browser, type Page } from "puppeteer-core";
import type { BenchDocument } from "./documents";
import { drive, type RunStats } from "./stats";

/**
 * The floor: a bare puppeteer-core loop on pre-opened pages, one per
 * concurrent job (each in its own browser context), with Chromium's fastest
 * settings and no isolation between renders. Nothing can be faster here.
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
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--mute-audio",
        "--hide-scrollbars",
        "--font-render-hinting=none",
      ],
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
      margin: pdf.margin,
      printBackground: true,
      displayHeaderFooter: Boolean(pdf.headerTemplate || pdf.footerTemplate),
      headerTemplate: pdf.headerTemplate || "<span></span>",
      footerTemplate: pdf.footerTemplate || "<span></span>",
    });
  }

  run(doc: BenchDocument, concurrency: number, count: number): Promise<RunStats> {
    return drive(concurrency, count, 2, async (worker) => {
      const out = await this.renderOnce(this.pages[worker]!, doc);
      if (out.byteLength < 100) throw new Error("empty output");
    });
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}
