import { useState } from "preact/hooks";
import { api, query, type JobList } from "../api";
import { navigate, useLocation } from "../router";
import { Badge, Show, Time, duration, useLoad } from "../ui";

const STATUSES = ["queued", "rendering", "succeeded", "failed"];

/** The key's jobs, newest first (GET /v1/jobs), filtered by status, kind and template, a page at a time. */
export function Jobs() {
  const { query: params } = useLocation();
  const filters = { status: params.get("status") ?? "", kind: params.get("kind") ?? "", template_id: params.get("template_id") ?? "" };
  const cursor = params.get("cursor") ?? "";
  const jobs = useLoad(() => api<JobList>("GET", `/v1/jobs${query({ ...filters, cursor, limit: 20 })}`), [params.toString()]);
  const [template, setTemplate] = useState(filters.template_id);
  const apply = (changed: Partial<typeof filters>) => navigate(`/console/jobs${query({ ...filters, ...changed })}`);

  return (
    <>
      <h1>Jobs</h1>
      <form
        class="filters"
        aria-label="Filter the jobs"
        onSubmit={(event) => {
          event.preventDefault();
          apply({ template_id: template.trim() });
        }}
      >
        <div>
          <label for="status">Status</label>
          <select id="status" value={filters.status} onChange={(e) => apply({ status: e.currentTarget.value })}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="kind">Kind</label>
          <select id="kind" value={filters.kind} onChange={(e) => apply({ kind: e.currentTarget.value })}>
            <option value="">Any</option>
            <option value="render">PDF (render)</option>
            <option value="image">Image</option>
          </select>
        </div>
        <div>
          <label for="template">Template id</label>
          <input id="template" value={template} placeholder="any" onInput={(e) => setTemplate(e.currentTarget.value)} />
        </div>
        <div class="filter-actions">
          <button type="submit">Filter</button>
          {(filters.status || filters.kind || filters.template_id) && (
            <a href="/console/jobs" class="button secondary">
              Clear
            </a>
          )}
        </div>
      </form>
      <Show loaded={jobs} what="the jobs">
        {(page) =>
          page.data.length === 0 ? (
            <p class="empty">
              {cursor
                ? "No more jobs."
                : filters.status || filters.kind || filters.template_id
                  ? "No jobs match these filters."
                  : "No jobs here yet. Render from one of your templates, or send POST /v1/render."}
            </p>
          ) : (
            <>
              <div class="table-scroll">
                <table class="jobs">
                  <caption class="visually-hidden">Jobs, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Job</th>
                      <th scope="col">Status</th>
                      <th scope="col">Kind</th>
                      <th scope="col">Template</th>
                      <th scope="col">Accepted</th>
                      <th scope="col">Took</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.data.map((job) => (
                      <tr key={job.id}>
                        <td>
                          <a href={`/console/jobs/${job.id}`}>
                            <code>{job.id}</code>
                          </a>
                        </td>
                        <td>
                          <Badge status={job.status} />
                        </td>
                        <td>{job.kind === "image" ? "image" : "PDF"}</td>
                        <td>{job.template_id ? `${job.template_id} v${job.template_version}` : <span class="muted">HTML</span>}</td>
                        <td>
                          <Time at={job.created_at} short />
                        </td>
                        <td>{job.finished_at ? duration(Date.parse(job.finished_at) - Date.parse(job.created_at)) : "–"}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <nav class="pager" aria-label="Pages of jobs">
                {cursor && <a href={`/console/jobs${query(filters)}`}>Newest</a>}
                {page.next_cursor && <a href={`/console/jobs${query({ ...filters, cursor: page.next_cursor })}`}>Older jobs</a>}
              </nav>
            </>
          )
        }
      </Show>
    </>
  );
}
