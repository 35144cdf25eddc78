import type { CDPSession, Protocol } from "puppeteer-core";
import { noop } from "./async";
import { withCredentials } from "./credentials";
import { resourceBudget, type ActiveJob } from "./job";
import { SubresourceTooLarge, decodeBody, fetcherRequestHeaders, responseHeaders, responseStatus } from "./network";
import type { SubresourceFetcher } from "./types";

/**
 * Answers one http(s) sub-request of a job through the SubresourceFetcher
 * (Chromium itself never reaches the network): at most FETCHES_PER_JOB at a
 * time per job, each bounded by `timeoutMs` and by the job, every byte
 * counted against the job's sub-resource budget. `current` tells whether the
 * page still belongs to the job; a late answer is dropped.
 */
export async function answerSubrequest(params: {
  session: CDPSession;
  job: ActiveJob;
  event: Protocol.Fetch.RequestPausedEvent;
  url: URL;
  fetcher: SubresourceFetcher | undefined;
  timeoutMs: number;
  current: () => boolean;
}): Promise<void> {
  const { session: s, job, event: e, url, fetcher, timeoutMs, current } = params;
  const requestId = e.requestId;
  if (!fetcher) {
    job.resourceFailed(e.resourceType, e.request.url);
    await s.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }).catch(noop);
    return;
  }
  job.origins.add(url.origin);
  job.subrequestsInFlight++;
  job.lastSubrequestAt = performance.now();
  let release: (() => void) | undefined;
  let errorReason: Protocol.Network.ErrorReason = "Failed";
  try {
    release = await job.fetches.acquire(job.controller.signal);
    const timeout = AbortSignal.timeout(timeoutMs);
    let taken = 0;
    const budget = {
      take: (bytes: number) => {
        taken += bytes;
        job.budgetLeft -= bytes;
        if (job.budgetLeft >= 0) return;
        job.interrupt(resourceBudget(job.budgetBytes));
        throw new SubresourceTooLarge(`the job's sub-resources add up to more than its ${job.budgetBytes} bytes`);
      },
    };
    const res = await fetcher({
      url,
      method: e.request.method,
      headers: withCredentials(url, fetcherRequestHeaders(e.request.headers), job.credentials),
      body: requestBody(e.request),
      signal: AbortSignal.any([job.controller.signal, timeout]),
      budget,
    }).catch((err: unknown) => {
      if (timeout.aborted) errorReason = "TimedOut";
      throw err;
    });
    // A body still encoded was counted as it arrived; what its decoding adds beyond that is charged as it is inflated.
    let decoded = 0;
    const body = await decodeBody(res.headers, res.body, (bytes) => {
      decoded += bytes;
      if (decoded > taken) budget.take(decoded - taken);
    });
    if (body.byteLength > taken) budget.take(body.byteLength - taken);
    if (!current() || job.failure) return;
    if (res.status >= 400) job.resourceFailed(e.resourceType, e.request.url, res.status);
    await s.send("Fetch.fulfillRequest", {
      requestId,
      responseCode: responseStatus(res.status),
      responseHeaders: responseHeaders(res.headers),
      body: body.toString("base64"),
    });
  } catch {
    if (!current()) return;
    job.resourceFailed(e.resourceType, e.request.url);
    await s.send("Fetch.failRequest", { requestId, errorReason }).catch(noop);
  } finally {
    release?.();
    job.subrequestsInFlight--;
    job.lastSubrequestAt = performance.now();
  }
}

function requestBody(request: Protocol.Network.Request): Buffer | undefined {
  if (request.postDataEntries?.length) {
    return Buffer.concat(request.postDataEntries.map((entry) => Buffer.from(entry.bytes ?? "", "base64")));
  }
  return request.postData === undefined ? undefined : Buffer.from(request.postData, "utf8");
}
