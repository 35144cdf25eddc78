import type { CDPSession } from "puppeteer-core";
import { noop } from "./async";
import { DEAD_PROXY } from "./chromium";
import type { Limits } from "./job";
import type { JobLayout } from "./paper";

/**
 * Per-origin storage a document can write (Storage.clearDataForOrigin types).
 * "all" would add the shader cache and other browser-wide caches, which cost
 * ~10 ms of CPU per call and hold nothing a document controls.
 */
export const CLEARED_STORAGE = "local_storage,indexeddb,cache_storage,file_systems,service_workers,shared_storage,storage_buckets,interest_groups";
/** What a fresh page holds until its job arrives: no script, nothing to keep. */
export const SHELL_HTML = "<!doctype html><html><head></head><body></body></html>";

/**
 * What a page prints before its first job: the parts of printing a first
 * real document would otherwise pay for (the header/footer machinery with
 * page numbers, the three Latin families, a table, an inline SVG).
 */
const WARM_UP_HTML = `<!doctype html><html><body style="font-family:sans-serif"><h1>warm-up</h1>
<p>0123456789 <b>bold</b> <i>italic</i> <span style="font-family:serif">serif</span> <code>mono</code></p>
<table style="border-collapse:collapse"><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>
<svg width="40" height="20"><rect width="40" height="20" fill="#246"/></svg></body></html>`;
const WARM_UP_FOOTER = `<div style="font-size:8px;width:100%;text-align:center"><span class="pageNumber"></span>/<span class="totalPages"></span></div>`;
export const WARM_UP: { html: string; layout: JobLayout; limits: Limits } = {
  html: WARM_UP_HTML,
  layout: {
    viewport: { width: 718, height: 1047, deviceScaleFactor: 1 },
    print: {
      paperWidth: 8.2677,
      paperHeight: 11.6929,
      landscape: false,
      displayHeaderFooter: true,
      headerTemplate: "<span></span>",
      footerTemplate: WARM_UP_FOOTER,
      preferCSSPageSize: true,
    },
    pageHeightPx: 1047,
  },
  limits: { maxPages: 10, maxOutputBytes: 10 * 1024 * 1024 },
};

/** A browser context with its one page, driven over the page's own CDP session. */
export interface OpenedPage {
  contextId: string;
  targetId: string;
  session: CDPSession;
}

/**
 * Creates a context (behind the dead proxy, downloads denied) and its page;
 * `prepare` readies the page before it is handed out, and the context is
 * disposed if opening or preparing it fails.
 */
export async function openPage<T>(browser: CDPSession, prepare: (page: OpenedPage) => Promise<T>): Promise<T> {
  const { browserContextId } = await browser.send("Target.createBrowserContext", {
    disposeOnDetach: true,
    proxyServer: DEAD_PROXY,
    proxyBypassList: "<-loopback>",
  });
  try {
    await browser.send("Browser.setDownloadBehavior", { behavior: "deny", browserContextId });
    const { targetId } = await browser.send("Target.createTarget", { url: "about:blank", browserContextId });
    const { sessionId } = await browser.send("Target.attachToTarget", { targetId, flatten: true });
    const session = browser.connection()?.session(sessionId);
    if (!session) throw new Error("no CDP session for the new page");
    return await prepare({ contextId: browserContextId, targetId, session });
  } catch (err) {
    await browser.send("Target.disposeBrowserContext", { browserContextId }).catch(noop);
    throw err;
  }
}

/** The page events and the interception the engine works with; the page's listeners must be in place first. */
export async function enableDomains(session: CDPSession): Promise<void> {
  await Promise.all([
    session.send("Page.enable"),
    session.send("Inspector.enable"),
    // For Runtime.exceptionThrown: the document's uncaught exceptions.
    session.send("Runtime.enable"),
    session.send("Fetch.enable", { patterns: [{ urlPattern: "*" }] }),
    // Third-party cookies (and with them, third-party storage) are refused where the browser
    // supports it (the full browser; the headless shell ignores it, and the wipe clears them).
    session
      .send("Network.setCookieControls", {
        enableThirdPartyCookieRestriction: true,
        disableThirdPartyCookieMetadata: true,
        disableThirdPartyCookieHeuristics: true,
      })
      .catch(noop),
  ]);
}

/**
 * What a job leaves beyond its window, cleared once its document is unloaded
 * (the page shows a script-free shell): history, cookies, window.name and the
 * storage of every origin the job reached (service workers and Cache Storage
 * among it). Two things need no clearing, by construction: the HTTP cache
 * (every response the interception gives Chromium says `no-store`, and none
 * comes from elsewhere) and permissions (`Browser.resetPermissions` undoes
 * DevTools' overrides, and the engine sets none).
 */
export async function clearJobState(session: CDPSession, origins: string[]): Promise<void> {
  await Promise.all([
    session.send("Page.resetNavigationHistory"),
    session.send("Network.clearBrowserCookies"),
    // window.name survives same-tab navigations; this runs in the (script-free) shell.
    session.send("Runtime.evaluate", { expression: "window.name = ''" }),
    ...origins.map((origin) => session.send("Storage.clearDataForOrigin", { origin, storageTypes: CLEARED_STORAGE })),
  ]);
}

/** The page's emulation as the jobs set it: each setting is sent only when a job changes it. */
export class PageEmulation {
  private viewport = "";
  private media = "";
  private scriptDisabled = false;

  /**
   * Whether the job's viewport or media differ from the last job's: the document still in the
   * page would see the change (a media query could load what it has not asked for yet).
   */
  changes(layout: JobLayout): boolean {
    return viewportOf(layout) !== this.viewport || (layout.media ?? "") !== this.media;
  }

  /** The job's viewport and media, and script execution off for a script-free document (on otherwise). */
  async apply(session: CDPSession, layout: JobLayout, scriptFree: boolean): Promise<void> {
    const { width, height, deviceScaleFactor } = layout.viewport;
    const viewport = viewportOf(layout);
    if (viewport !== this.viewport) {
      await session.send("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor, mobile: false });
      this.viewport = viewport;
    } else {
      // A round trip to the renderer: a browser killed since the last job shows up here,
      // before the document is handed over, so the job can go to the next browser.
      await session.send("Runtime.evaluate", { expression: "0" });
    }
    const media = layout.media ?? "";
    if (media !== this.media) {
      await session.send("Emulation.setEmulatedMedia", { media });
      this.media = media;
    }
    if (scriptFree !== this.scriptDisabled) {
      await session.send("Emulation.setScriptExecutionDisabled", { value: scriptFree });
      this.scriptDisabled = scriptFree;
    }
  }
}

function viewportOf({ viewport: { width, height, deviceScaleFactor } }: JobLayout): string {
  return `${width}x${height}@${deviceScaleFactor}`;
}

/** Answers a paused document request with `html`, never to be cached. */
export async function serveHtml(session: CDPSession, requestId: string, html: string): Promise<void> {
  await session.send("Fetch.fulfillRequest", {
    requestId,
    responseCode: 200,
    responseHeaders: [
      { name: "content-type", value: "text/html; charset=utf-8" },
      { name: "cache-control", value: "no-store" },
    ],
    body: Buffer.from(html, "utf8").toString("base64"),
  });
}
