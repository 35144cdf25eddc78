import { jobEventsV1 } from "@pressroom/contracts";

/**
 * What the audit projection keeps of an event's payload: enough to answer
 * who did what and when, nothing secret. The signed download URL is left
 * out (its output id and expiry are kept), the webhook URL is reduced to its
 * host (its path or query may carry the customer's token), a destination to
 * its host (the JOBS stream keeps no more of it), and the document
 * (html, data) to its size (the JOBS stream keeps no more of it either).
 */
export function summarize(event: jobEventsV1.JobEvent): Record<string, unknown> {
  if (event.accepted) {
    const a = event.accepted;
    return {
      kind: a.kind === jobEventsV1.JobKind.JOB_KIND_IMAGE ? "image" : "render",
      template_id: a.templateId || null,
      template_version: a.templateId ? a.templateVersion : null,
      html_bytes: a.htmlBytes,
      data_bytes: a.dataBytes,
      plan: a.plan || null,
      webhook_host: webhookHost(a.webhookUrl),
      ...(a.destination ? { destination_host: a.destination.host } : {}),
    };
  }
  if (event.started) return { worker: event.started.worker, attempt: event.started.attempt };
  if (event.succeeded ?? event.rendered) {
    const s = (event.succeeded ?? event.rendered)!;
    return {
      output_id: s.outputId,
      content_type: s.contentType,
      size_bytes: Number(s.sizeBytes),
      pages: s.pages,
      render_ms: s.renderMs,
      expires_at: s.expiresAt || null,
    };
  }
  if (event.failed) return { code: event.failed.code, message: event.failed.message, refund: event.failed.refund };
  if (event.webhookAttempted) {
    const w = event.webhookAttempted;
    return { attempt: w.attempt, status: w.status, error: w.error || null, next_attempt_at: w.nextAttemptAt || null };
  }
  if (event.webhookDelivered) return { attempt: event.webhookDelivered.attempt, status: event.webhookDelivered.status };
  if (event.webhookExhausted) return { attempts: event.webhookExhausted.attempts, reason: event.webhookExhausted.reason };
  if (event.destinationAttempted) {
    const d = event.destinationAttempted;
    return { attempt: d.attempt, status: d.status, host: d.host, duration_ms: d.durationMs, error: d.error || null, next_attempt_at: d.nextAttemptAt || null };
  }
  if (event.destinationDelivered) return { attempt: event.destinationDelivered.attempt, status: event.destinationDelivered.status };
  if (event.destinationExhausted) return { attempts: event.destinationExhausted.attempts, reason: event.destinationExhausted.reason };
  return {};
}

function webhookHost(url: string): string | null {
  if (!url) return null;
  try {
    return new URL(url).host;
  } catch {
    return "(invalid)";
  }
}
