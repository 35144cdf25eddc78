import type { storageV1, webhookV1 } from "@pressroom/contracts";
import { call, type z } from "@pressroom/platform";
import { loadJob, type JobState } from "@pressroom/domain";
import type { Context } from "koa";
import type { JetStreamManager } from "nats";
import { keyed, type KeyedDeps } from "../access/admission";
import { readQuery } from "../query";
import { JobListQuery, type JobList } from "./api";
import { jobBody, liveOutputs } from "./view";

/**
 * GET /v1/jobs: the caller's jobs, newest first, from the webhook service's read model of the
 * JOBS stream (which filters and pages); each job is then read from its events, exactly as GET
 * /v1/jobs/{id} answers it (the URLs of the page's outputs that live signed in one call to storage). A
 * job whose events have aged out of the stream is left out.
 */
export function jobList(deps: KeyedDeps & { jsm: JetStreamManager; webhook: webhookV1.WebhookServiceClient; storage: storageV1.StorageServiceClient }) {
  const { webhook } = deps;
  return async (ctx: Context): Promise<void> => {
    const principal = await keyed(deps, ctx);
    const query = readQuery(ctx, JobListQuery, "See GET /v1/openapi.json for the parameters of GET /v1/jobs.");
    const page = await call(webhook, webhook.listJobs, {
      keyId: principal.keyId,
      status: query.status ?? "",
      kind: query.kind ?? "",
      templateId: query.template_id ?? "",
      limit: query.limit ?? 0,
      cursor: query.cursor ?? "",
    });
    const loaded = await Promise.all(page.jobIds.map((id) => loadJob(deps.jsm, id)));
    const jobs = loaded.filter((job): job is JobState => job !== undefined && job.keyId === principal.keyId);
    const live = await liveOutputs(deps.storage, principal.keyId, jobs);
    ctx.set("Cache-Control", "no-store");
    ctx.body = {
      data: jobs.map((job) => jobBody(job, live)),
      next_cursor: page.nextCursor || null,
    } satisfies z.input<typeof JobList>;
  };
}
