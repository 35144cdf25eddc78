import { api, type Template } from "../api";
import { Show, useLoad } from "../ui";

/** The account's own templates (GET /v1/templates with the session: the catalog's are on the gallery). */
export function Templates({ readOnly }: { readOnly: boolean }) {
  const templates = useLoad(() => api<{ templates: Template[] }>("GET", "/v1/templates"), []);
  return (
    <>
      <div class="heading-row">
        <h1>Templates</h1>
        {!readOnly && (
          <a class="button" href="/console/templates/new">
            New template
          </a>
        )}
      </div>
      <p class="lead">
        Your own templates, private to your key. The public ones are in the <a href="/">gallery</a>.
      </p>
      <Show loaded={templates} what="your templates">
        {({ templates: all }) => {
          const own = all.filter((t) => t.visibility === "private");
          if (own.length === 0) return <p class="empty">No templates of your own yet.{readOnly ? "" : " Make one with New template."}</p>;
          return (
            <ul class="cards">
              {own.map((t) => (
                <li key={t.id}>
                  <article class="card">
                    <div class="preview">
                      <img src={t.preview_url} alt={`Preview of ${t.name}`} loading="lazy" />
                    </div>
                    <h2>
                      <a href={`/console/templates/${t.id}`}>{t.name}</a>
                    </h2>
                    <p>
                      <code>{t.id}</code>
                    </p>
                    <dl class="facts">
                      <div>
                        <dt>Output</dt>
                        <dd>{t.output.toUpperCase()}</dd>
                      </div>
                      <div>
                        <dt>Version</dt>
                        <dd>{t.version}</dd>
                      </div>
                    </dl>
                  </article>
                </li>
              ))}
            </ul>
          );
        }}
      </Show>
    </>
  );
}
