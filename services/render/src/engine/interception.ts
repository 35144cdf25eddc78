import type { CDPSession, Protocol } from "puppeteer-core";
import { noop } from "./async";
import { blockedNavigation, type ActiveJob } from "./job";
import { assetContentType, decideRequest } from "./network";
import { answerSubrequest } from "./subrequest";
import type { SubresourceFetcher } from "./types";

/** Whom a page's paused request is answered for. */
export interface InterceptedPage {
  session: CDPSession;
  /** The page's target, which is also its main frame. */
  targetId: string;
  /** The job on the page, if any. */
  job: ActiveJob | undefined;
  fetcher: SubresourceFetcher | undefined;
  subrequestTimeoutMs: number;
  /** Whether `job` is still the page's (a late answer is dropped). */
  current: () => boolean;
}

/**
 * Answers one request the page made, as the request policy (decideRequest)
 * says: one of the job's assets, a 404, through to Chromium (data:, blob:),
 * refused, or fetched by the SubresourceFetcher.
 */
export function answerRequest(page: InterceptedPage, e: Protocol.Fetch.RequestPausedEvent): void {
  const { session: s, job } = page;
  const requestId = e.requestId;
  const decision = decideRequest(
    { url: e.request.url, resourceType: e.resourceType, isMainFrame: e.frameId === page.targetId },
    job && { documentUrl: job.documentUrl, assets: job.assets },
  );
  if (job && decision.kind !== "continue") job.requested = true;
  switch (decision.kind) {
    case "asset":
      void s
        .send("Fetch.fulfillRequest", {
          requestId,
          responseCode: 200,
          responseHeaders: [
            { name: "content-type", value: assetContentType(decision.name) },
            { name: "cache-control", value: "no-store" },
          ],
          body: Buffer.from(job!.assets.get(decision.name)!).toString("base64"),
        })
        .catch(noop);
      return;
    case "not_found":
      job?.resourceFailed(e.resourceType, e.request.url, 404);
      void s
        .send("Fetch.fulfillRequest", { requestId, responseCode: 404, responseHeaders: [{ name: "cache-control", value: "no-store" }], body: "" })
        .catch(noop);
      return;
    case "continue":
      void s.send("Fetch.continueRequest", { requestId }).catch(noop);
      return;
    case "block":
      if (!decision.navigation) job?.resourceFailed(e.resourceType, e.request.url);
      void s.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }).catch(noop);
      if (decision.navigation && job?.documentServed) job.interrupt(blockedNavigation());
      return;
    case "fetch":
      void answerSubrequest({
        session: s,
        job: job!,
        event: e,
        url: decision.url,
        fetcher: page.fetcher,
        timeoutMs: page.subrequestTimeoutMs,
        current: page.current,
      });
      return;
  }
}
