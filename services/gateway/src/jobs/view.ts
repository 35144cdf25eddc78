import type { storageV1 } from "@pressroom/contracts";
import { AppError, call, type z } from "@pressroom/platform";
import { loadJob, type JobState } from "@pressroom/domain";
import type { Context } from "koa";
import type { JetStreamManager } from "nats";
import { keyed, type KeyedDeps } from "../access/admission";
import type { Job } from "./api";

const JOB_ID = /^job_[0-9a-z]{26}$/;

/** An output's URL as storage signs it now: absent once the output expired or was deleted. */
export type LiveOutputs = Map<string, storageV1.SignedOutput>;

/** Storage's fresh signed URLs of the succeeded jobs' outputs that still live (one call for a page of jobs). */
export async function liveOutputs(storage: storageV1.StorageServiceClient, keyId: string, jobs: JobState[]): Promise<LiveOutputs> {
  const outputIds = jobs.flatMap((job) => (job.result?.outputId ? [job.result.outputId] : []));
  if (outputIds.length === 0) return new Map();
  const signed = await call(storage, storage.signOutputs, { keyId, outputIds });
  return new Map(signed.outputs.map((output) => [output.outputId, output]));
}

/** GET /v1/jobs/<id>: the caller's own jobs only, with a URL signed now while its output lives. */
export function jobView(deps: KeyedDeps & { jsm: JetStreamManager; storage: storageV1.StorageServiceClient }) {
  return async (ctx: Context): Promise<void> => {
    const principal = await keyed(deps, ctx);
    const id = ctx.params.id as string;
    const job = JOB_ID.test(id) ? await loadJob(deps.jsm, id) : undefined;
    if (!job || job.keyId !== principal.keyId) {
      throw new AppError("NOT_FOUND", `job "${id}" not found`, "Use the id returned by POST /v1/render or /v1/image with the same key.");
    }
    ctx.set("Cache-Control", "no-store");
    ctx.body = jobBody(job, await liveOutputs(deps.storage, principal.keyId, [job]));
  };
}

/** A job as GET /v1/jobs/{id} answers it (and each entry of GET /v1/jobs): its output's URL only while the output lives. */
export function jobBody(job: JobState, live: LiveOutputs): z.input<typeof Job> {
  const output = job.result?.outputId ? live.get(job.result.outputId) : undefined;
  return {
    id: job.id,
    status: job.status,
    kind: job.kind,
    template_id: job.templateId || null,
    template_version: job.templateVersion || null,
    ...(job.test ? { test: true as const } : {}),
    created_at: job.createdAt,
    started_at: job.startedAt ?? null,
    finished_at: job.finishedAt ?? null,
    output_id: job.result?.outputId || null,
    url: output?.url ?? null,
    expires_at: output?.expiresAt ?? null,
    content_type: job.result?.contentType ?? null,
    size_bytes: job.result ? Number(job.result.sizeBytes) : null,
    error: job.error ? { code: job.error.code, message: job.error.message } : null,
    destination: job.destination
      ? {
          host: job.destination.host,
          state: job.destination.state,
          attempts: job.destination.attempts,
          last_status: job.destination.lastStatus ?? null,
          last_error: job.destination.lastError ?? null,
          next_attempt_at: job.destination.nextAttemptAt ?? null,
        }
      : null,
    webhook: job.webhookUrl
      ? {
          state: job.webhook.state,
          attempts: job.webhook.attempts,
          last_status: job.webhook.lastStatus ?? null,
          last_error: job.webhook.lastError ?? null,
          next_attempt_at: job.webhook.nextAttemptAt ?? null,
        }
      : null,
    events: job.history.map((event) => ({
      id: event.id,
      type: event.type,
      time: event.time,
      source: event.source,
      ...(event.type === "job.succeeded" && job.result?.scriptErrors.length ? { script_errors: job.result.scriptErrors } : {}),
      ...(event.destinationAttempt
        ? {
            destination: {
              attempt: event.destinationAttempt.attempt,
              status: event.destinationAttempt.status,
              duration_ms: event.destinationAttempt.durationMs,
              host: event.destinationAttempt.host,
              error: event.destinationAttempt.error || null,
              next_attempt_at: event.destinationAttempt.nextAttemptAt || null,
            },
          }
        : {}),
    })),
  } satisfies z.input<typeof Job>;
}
