import { previewPixels } from "@pressroom/domain/paper";
import { useEffect, useRef, useState } from "preact/hooks";
import { snippets } from "../../../snippets";
import { api, type ApiError, type Template } from "../api";
import { createDiff, type Language } from "../editor/codemirror";
import { Problem, Show, Time, asApiError, useLoad } from "../ui";
import { VisualDiff } from "../visual-diff";

type Version = { version: number; created_at: string };

/** One own template: its preview, a render of it, its versions with a source diff between two, and the code to render it. */
export function TemplatePage({ id, readOnly }: { id: string; readOnly: boolean }) {
  const template = useLoad(() => api<Template>("GET", `/v1/templates/${encodeURIComponent(id)}`), [id]);
  const versions = useLoad(() => api<{ versions: Version[] }>("GET", `/v1/templates/${encodeURIComponent(id)}/versions`), [id]);
  return (
    <Show loaded={template} what="the template">
      {(t) => (
        <>
          <p class="crumbs">
            <a href="/console/templates">Templates</a> ›
          </p>
          <div class="heading-row">
            <h1>{t.name}</h1>
            {!readOnly && (
              <a class="button" href={`/console/templates/${t.id}/edit`}>
                Edit: new version
              </a>
            )}
          </div>
          <p class="lead">{t.description}</p>
          <div class="detail">
            <div>
              <dl class="facts wide">
                <div>
                  <dt>Id</dt>
                  <dd>
                    <code>{t.id}</code>
                  </dd>
                </div>
                <div>
                  <dt>Version</dt>
                  <dd>{t.version}</dd>
                </div>
                <div>
                  <dt>Output</dt>
                  <dd>{t.output === "png" ? `PNG, ${t.width} × ${t.height} px` : `PDF, ${t.page?.format} ${t.page?.landscape ? "landscape" : "portrait"}`}</dd>
                </div>
              </dl>
              {!readOnly && <RenderIt template={t} />}
            </div>
            <figure>
              <img src={t.preview_url} alt={`Preview of ${t.name}, version ${t.version}`} {...previewPixels(t)} />
              <figcaption>Version {t.version} with its sample data</figcaption>
            </figure>
          </div>
          <h2>Versions</h2>
          <Show loaded={versions} what="the versions">
            {(v) => <Versions id={t.id} versions={v.versions} />}
          </Show>
          <Snippets template={t} />
        </>
      )}
    </Show>
  );
}

/** Renders the template with its sample data (POST /v1/render or /v1/image); with a webhook URL, async with a callback. */
function RenderIt({ template }: { template: Template }) {
  const [webhook, setWebhook] = useState("");
  const [result, setResult] = useState<{ id: string; status: string; url?: string } | { error: ApiError } | undefined>();
  const [busy, setBusy] = useState(false);
  const render = async () => {
    setBusy(true);
    setResult(undefined);
    const body = { template_id: template.id, data: template.sample_data, ...(webhook.trim() ? { webhook_url: webhook.trim() } : {}) };
    try {
      setResult(await api<{ id: string; status: string; url?: string }>("POST", template.output === "png" ? "/v1/image" : "/v1/render", body));
    } catch (error) {
      setResult({ error: asApiError(error) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      class="panel"
      onSubmit={(event) => {
        event.preventDefault();
        void render();
      }}
    >
      <h2>Render it</h2>
      <p class="help">With its sample data; it counts against your quota like any render.</p>
      <label for="webhook-url">Webhook URL (optional)</label>
      <input id="webhook-url" type="url" placeholder="https://…" value={webhook} onInput={(e) => setWebhook(e.currentTarget.value)} />
      <p class="help">With one, the job runs in the background and its result is sent there, signed with your webhook secret.</p>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? "Rendering…" : "Render"}
        </button>
      </div>
      {result && "error" in result && <Problem error={result.error} title="Not rendered" />}
      {result && "id" in result && (
        <p class="notice" role="status">
          Job <a href={`/console/jobs/${result.id}`}>{result.id}</a>: {result.status}
          {result.url && (
            <>
              {" "}
              · <a href={result.url}>open the output</a>
            </>
          )}
        </p>
      )}
    </form>
  );
}

/** The versions, newest first, and the changes between two of them: their sources', and their previews' pixels. */
function Versions({ id, versions }: { id: string; versions: Version[] }) {
  const [from, setFrom] = useState(versions[1]?.version ?? versions[0]?.version ?? 1);
  const [to, setTo] = useState(versions[0]?.version ?? 1);
  const [shown, setShown] = useState<{ from: number; to: number } | undefined>();
  return (
    <>
      <table>
        <caption class="visually-hidden">Versions, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Made</th>
          </tr>
        </thead>
        <tbody>
          {versions.map((v) => (
            <tr key={v.version}>
              <td>{v.version}</td>
              <td>
                <Time at={v.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {versions.length > 1 && (
        <form
          class="compare"
          onSubmit={(event) => {
            event.preventDefault();
            setShown({ from, to });
          }}
        >
          <VersionSelect id="diff-from" label="Compare version" versions={versions} value={from} onChange={setFrom} />
          <VersionSelect id="diff-to" label="with version" versions={versions} value={to} onChange={setTo} />
          <button type="submit">Show the changes</button>
        </form>
      )}
      {shown && <SourceDiff id={id} from={shown.from} to={shown.to} />}
      {shown && <VisualDiff id={id} from={shown.from} to={shown.to} />}
    </>
  );
}

function VersionSelect(props: { id: string; label: string; versions: Version[]; value: number; onChange: (version: number) => void }) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange(Number(e.currentTarget.value))}>
        {props.versions.map((v) => (
          <option key={v.version} value={v.version}>
            {v.version}
          </option>
        ))}
      </select>
    </div>
  );
}

function SourceDiff({ id, from, to }: { id: string; from: number; to: number }) {
  const pair = useLoad(() => Promise.all([from, to].map((n) => api<Template>("GET", `/v1/templates/${encodeURIComponent(id)}/versions/${n}`))), [id, from, to]);
  return (
    <section class="diff" aria-label={`Changes from version ${from} to version ${to}`}>
      <Show loaded={pair} what="the two versions">
        {([a, b]) => (
          <>
            <DiffPart title="Template (HTML)" language="html" original={a!.html ?? ""} changed={b!.html ?? ""} />
            <DiffPart
              title="Data schema"
              language="json"
              original={JSON.stringify(a!.data_schema, null, 2)}
              changed={JSON.stringify(b!.data_schema, null, 2)}
            />
            <DiffPart
              title="Sample data"
              language="json"
              original={JSON.stringify(a!.sample_data, null, 2)}
              changed={JSON.stringify(b!.sample_data, null, 2)}
            />
          </>
        )}
      </Show>
    </section>
  );
}

function DiffPart({ title, language, original, changed }: { title: string; language: Language; original: string; changed: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (original === changed || !box.current) return;
    const view = createDiff({ parent: box.current, original, changed, language, label: `${title}: changes` });
    return () => view.destroy();
  }, [original, changed]);
  return (
    <>
      <h3>{title}</h3>
      {original === changed ? <p class="muted">Unchanged.</p> : <div ref={box} class="code" />}
    </>
  );
}

function Snippets({ template }: { template: Template }) {
  const code = snippets(template, location.origin, { env: "PRESSROOM_API_KEY" });
  return (
    <section class="snippets" aria-labelledby="code-title">
      <h2 id="code-title">Render it from your code</h2>
      <p class="help">With your key in the environment variable PRESSROOM_API_KEY.</p>
      {(
        [
          ["curl", code.curl],
          ["JavaScript", code.javascript],
          ["Python", code.python],
        ] as const
      ).map(([label, text]) => (
        <div key={label}>
          <h3>{label}</h3>
          <pre tabIndex={0}>
            <code>{text}</code>
          </pre>
        </div>
      ))}
    </section>
  );
}
