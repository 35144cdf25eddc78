import { api, query, type DeliveryList, type Job } from "../api";
import { DeliveryTable } from "../deliveries";
import { Badge, Problem, Show, Time, bytes, duration, useLoad } from "../ui";

const LABELS: Record<string, string> = {
  "job.accepted": "Accepted",
  "job.started": "Rendering started",
  "job.succeeded": "Succeeded",
  "job.failed": "Failed",
  "job.webhook_attempted": "Callback sent",
  "job.webhook_delivered": "Callback delivered",
  "job.webhook_exhausted": "Callback given up",
  "job.webhook_replay_requested": "Callback replay asked for",
};

/** One job (GET /v1/jobs/{id}): its facts, its error, its download while it lasts, its whole event history, its callback's deliveries. */
export function JobPage({ id, readOnly }: { id: string; readOnly: boolean }) {
  const job = useLoad(() => api<Job>("GET", `/v1/jobs/${encodeURIComponent(id)}`), [id]);
  return (
    <Show loaded={job} what="the job">
      {(j) => <JobDetail job={j} readOnly={readOnly} onChange={job.reload} />}
    </Show>
  );
}

function JobDetail({ job, readOnly, onChange }: { job: Job; readOnly: boolean; onChange: () => void }) {
  const end = job.finished_at ? Date.parse(job.finished_at) : undefined;
  const live = job.url && job.expires_at && Date.parse(job.expires_at) > Date.now();
  return (
    <>
      <p class="crumbs">
        <a href="/console/jobs">Jobs</a> ›
      </p>
      <h1 class="with-badge">
        <span>
          Job <code>{job.id}</code>
        </span>
        <Badge status={job.status} />
      </h1>
      <dl class="facts wide">
        <div>
          <dt>Kind</dt>
          <dd>{job.kind === "image" ? "Image" : "PDF"}</dd>
        </div>
        <div>
          <dt>Source</dt>
          <dd>{job.template_id ? <a href={`/console/templates/${job.template_id}`}>{`${job.template_id} v${job.template_version}`}</a> : "HTML"}</dd>
        </div>
        <div>
          <dt>Accepted</dt>
          <dd>
            <Time at={job.created_at} />
          </dd>
        </div>
        <div>
          <dt>Took</dt>
          <dd>{end ? duration(end - Date.parse(job.created_at)) : "not finished"}</dd>
        </div>
        {job.size_bytes !== null && (
          <div>
            <dt>Output</dt>
            <dd>
              {job.content_type}, {bytes(job.size_bytes)}
            </dd>
          </div>
        )}
      </dl>
      {job.status === "succeeded" &&
        (live ? (
          <p class="download">
            <a class="button" href={job.url!} download>
              Download {job.kind === "image" ? "the image" : "the PDF"}
            </a>{" "}
            <span class="muted">
              The link works until <Time at={job.expires_at} />.
            </span>
          </p>
        ) : (
          <p class="muted">
            The output expired at <Time at={job.expires_at} /> and was deleted.
          </p>
        ))}
      {job.error && (
        <div class="problems" role="alert">
          <p>The job failed</p>
          <ul>
            <li>
              <code>{job.error.code}</code>: {job.error.message}
            </li>
            <li>
              {job.error.code === "INTERNAL_ERROR" ? "Our failure: its quota unit was refunded." : "The document's failure: it counts against the quota."}
            </li>
          </ul>
        </div>
      )}
      <h2>Timeline</h2>
      <Timeline job={job} />
      {job.webhook && <Callback job={job} readOnly={readOnly} onChange={onChange} />}
    </>
  );
}

/** Every event of the job, oldest first, with the time since the one before and since the acceptance. */
function Timeline({ job }: { job: Job }) {
  const start = Date.parse(job.created_at);
  let previous = start;
  let attempts = 0;
  return (
    <ol class="timeline">
      {job.events.map((event) => {
        const at = Date.parse(event.time);
        const since = at - previous;
        previous = at;
        if (event.type === "job.started") attempts++;
        const label = LABELS[event.type] ?? event.type;
        return (
          <li key={event.id} class={`event event-${event.type.replace("job.", "")}`}>
            <span class="when">
              <Time at={event.time} />
            </span>
            <span class="what">
              <strong>{event.type === "job.started" && attempts > 1 ? `${label} (attempt ${attempts})` : label}</strong>{" "}
              <span class="muted">by {event.source}</span>
            </span>
            <span class="took">{event.type === "job.accepted" ? "" : `+${duration(since)} (at ${duration(at - start)})`}</span>
          </li>
        );
      })}
    </ol>
  );
}

function Callback({ job, readOnly, onChange }: { job: Job; readOnly: boolean; onChange: () => void }) {
  const deliveries = useLoad(() => api<DeliveryList>("GET", `/v1/webhooks/deliveries${query({ job_id: job.id, limit: 100 })}`), [job.id, job.events.length]);
  return (
    <section aria-labelledby="callback-title">
      <h2 id="callback-title">Callback</h2>
      <p>
        <Badge status={job.webhook!.state} /> {job.webhook!.attempts} attempt{job.webhook!.attempts === 1 ? "" : "s"}
        {job.webhook!.next_attempt_at && (
          <>
            , next at <Time at={job.webhook!.next_attempt_at} />
          </>
        )}
        .
      </p>
      {deliveries.error && <Problem error={deliveries.error} title="Could not load the deliveries" />}
      {deliveries.data && (
        <DeliveryTable
          deliveries={deliveries.data.data}
          readOnly={readOnly}
          showJob={false}
          onReplayed={() => {
            deliveries.reload();
            setTimeout(onChange, 1_500);
          }}
        />
      )}
    </section>
  );
}
