import { PAPER_FORMATS } from "@pressroom/domain/paper";
import type { EditorView } from "@codemirror/view";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, type Template } from "../api";
import { createEditor, showProblems, type Language } from "../editor/codemirror";
import { useLivePreview, type LivePreview } from "../editor/live-preview";
import { versionPreview } from "../editor/preview";
import { placeProblem } from "../editor/problems";
import { navigate } from "../router";
import { Loading, Problem, asApiError } from "../ui";

const STARTER = {
  html: '<!doctype html>\n<html>\n<body style="font-family: sans-serif">\n  <h1>Hello {{name}}</h1>\n  <p>{{message}}</p>\n</body>\n</html>\n',
  schema:
    '{\n  "type": "object",\n  "required": ["name"],\n  "properties": {\n    "name": { "type": "string" },\n    "message": { "type": "string" }\n  }\n}\n',
  sample: '{\n  "name": "Ada",\n  "message": "Your first template."\n}\n',
};

type Fields = { id: string; name: string; description: string; output: "pdf" | "png"; format: string; landscape: boolean; width: string; height: string };
type Texts = { html: string; schema: string; sample: string };
type EditorName = keyof Texts;

const pretty = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** A new template, or the next version of one (`id`): its settings, and its source, data schema and sample data in CodeMirror editors. */
export function Editor({ id }: { id?: string }) {
  const [loaded, setLoaded] = useState<{ template?: Template; error?: ApiError } | undefined>(id ? undefined : {});
  useEffect(() => {
    if (!id) return;
    api<Template>("GET", `/v1/templates/${encodeURIComponent(id)}`).then(
      (template) => setLoaded({ template }),
      (error: unknown) => setLoaded({ error: asApiError(error) }),
    );
  }, [id]);
  if (!loaded) return <Loading what="the template" />;
  if (loaded.error) return <Problem error={loaded.error} title="Could not load the template" />;
  return <Form template={loaded.template} />;
}

function Form({ template }: { template?: Template }) {
  const [fields, setFields] = useState<Fields>({
    id: template?.id ?? "",
    name: template?.name ?? "",
    description: template?.description ?? "",
    output: template?.output ?? "pdf",
    format: template?.page?.format ?? "A4",
    landscape: template?.page?.landscape ?? false,
    width: String(template?.width ?? 1200),
    height: String(template?.height ?? 630),
  });
  const texts = useRef<Texts>(
    template ? { html: template.html ?? "", schema: pretty(template.data_schema), sample: pretty(template.sample_data) } : { ...STARTER },
  );
  const views = useRef<Partial<Record<EditorName, EditorView>>>({});
  const [problem, setProblem] = useState<{ error: ApiError; field?: string } | undefined>();
  const [saving, setSaving] = useState(false);
  const [edits, setEdits] = useState(0);
  const edited = () => setEdits((n) => n + 1);
  const assets = template?.asset_names ?? [];
  const set = (changed: Partial<Fields>) => {
    setFields((f) => ({ ...f, ...changed }));
    edited();
  };

  const body = (): Record<string, unknown> | ApiError => {
    const parsed: Record<string, unknown> = {};
    for (const [name, field] of [
      ["schema", "data_schema"],
      ["sample", "sample_data"],
    ] as const) {
      try {
        parsed[field] = JSON.parse(texts.current[name]);
      } catch (err) {
        return new ApiError(422, "PAYLOAD_INVALID", `${field}: is not JSON: ${(err as Error).message}`, "Fix the JSON at the marked line.");
      }
    }
    const size =
      fields.output === "png"
        ? { width: Number(fields.width), height: Number(fields.height) }
        : { page: { format: fields.format, landscape: fields.landscape } };
    return { id: fields.id.trim(), name: fields.name, description: fields.description, output: fields.output, html: texts.current.html, ...parsed, ...size };
  };

  // A new template's draft renders at once; an existing one's once it differs from the saved version (whose stored preview shows until then).
  const live = useLivePreview({
    changes: [edits],
    enabled: edits > 0 || !template,
    // The preview renders the source with its sample data: a draft not yet named (no id, no name) is rendered all the same.
    draft: () => {
      const payload = body();
      if (payload instanceof ApiError) return payload;
      const { id, name, ...rest } = payload;
      return { ...rest, ...(id ? { id } : {}), name: name || "Untitled draft" };
    },
    texts: () => texts.current,
    views: () => views.current,
  });

  const save = async () => {
    const payload = body();
    for (const view of Object.values(views.current)) if (view) showProblems(view, []);
    if (payload instanceof ApiError) return setProblem({ error: payload });
    setSaving(true);
    setProblem(undefined);
    try {
      const saved = template
        ? await api<Template>("PUT", `/v1/templates/${encodeURIComponent(template.id)}`, payload)
        : await api<Template>("POST", "/v1/templates", payload);
      navigate(`/console/templates/${saved.id}`);
    } catch (err) {
      const error = asApiError(err);
      const placed = error.status === 422 && error.code === "PAYLOAD_INVALID" ? placeProblem(error, texts.current) : undefined;
      if (placed && "editor" in placed && views.current[placed.editor]) showProblems(views.current[placed.editor]!, [placed.problem]);
      setProblem({ error, ...(placed && "field" in placed ? { field: placed.field } : {}) });
      setSaving(false);
    }
  };

  return (
    <>
      <p class="crumbs">
        <a href="/console/templates">Templates</a> ›{" "}
        {template && (
          <>
            <a href={`/console/templates/${template.id}`}>{template.name}</a> ›
          </>
        )}
      </p>
      <h1>{template ? `New version of ${template.name}` : "New template"}</h1>
      {assets.length > 0 && (
        <p class="notice" role="status">
          This template has assets ({assets.join(", ")}), which the console cannot send back: save its next version with the API (PUT /v1/templates/
          {template!.id} with its assets), so that they are kept.
        </p>
      )}
      <form
        class="editor-layout"
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <div class="editor-main">
          <Settings fields={fields} set={set} isNew={!template} invalid={problem?.field} />
          <CodePanel name="html" title="Template: HTML with Handlebars" language="html" texts={texts} views={views} onEdit={edited} />
          <CodePanel name="schema" title="Data schema (JSON Schema)" language="json" texts={texts} views={views} onEdit={edited} />
          <CodePanel name="sample" title="Sample data (JSON)" language="json" texts={texts} views={views} onEdit={edited} />
          <div class="actions sticky-actions">
            <button type="submit" disabled={saving || assets.length > 0}>
              {saving ? "Saving: rendering its preview…" : template ? "Save as a new version" : "Create the template"}
            </button>
            <a class="button secondary" href={template ? `/console/templates/${template.id}` : "/console/templates"}>
              Cancel
            </a>
          </div>
          {problem && <Problem error={problem.error} title="Not saved" />}
        </div>
        <PreviewPane live={live} saved={template && { id: template.id, version: template.version ?? 1 }} />
      </form>
    </>
  );
}

function Settings({ fields, set, isNew, invalid }: { fields: Fields; set: (f: Partial<Fields>) => void; isNew: boolean; invalid?: string }) {
  const field = (name: string) => ({ "aria-invalid": invalid === name ? ("true" as const) : undefined });
  return (
    <fieldset class="settings">
      <legend>Settings</legend>
      <div class="grid">
        <div>
          <label for="t-id">Id</label>
          <input
            id="t-id"
            required
            disabled={!isNew}
            value={fields.id}
            pattern="[a-z0-9][a-z0-9-]{0,63}"
            onInput={(e) => set({ id: e.currentTarget.value })}
            {...field("id")}
          />
          <p class="help">Lowercase letters, digits and dashes; the id you render it by.</p>
        </div>
        <div>
          <label for="t-name">Name</label>
          <input id="t-name" required value={fields.name} onInput={(e) => set({ name: e.currentTarget.value })} {...field("name")} />
        </div>
        <div class="span">
          <label for="t-description">Description</label>
          <input id="t-description" value={fields.description} onInput={(e) => set({ description: e.currentTarget.value })} {...field("description")} />
        </div>
        <div>
          <label for="t-output">Output</label>
          <select id="t-output" value={fields.output} onChange={(e) => set({ output: e.currentTarget.value as Fields["output"] })}>
            <option value="pdf">PDF</option>
            <option value="png">PNG image</option>
          </select>
        </div>
        {fields.output === "pdf" ? (
          <>
            <div>
              <label for="t-format">Paper</label>
              <select id="t-format" value={fields.format} onChange={(e) => set({ format: e.currentTarget.value })}>
                {PAPER_FORMATS.map((format) => (
                  <option key={format}>{format}</option>
                ))}
              </select>
            </div>
            <div class="check">
              <input id="t-landscape" type="checkbox" checked={fields.landscape} onChange={(e) => set({ landscape: e.currentTarget.checked })} />
              <label for="t-landscape">Landscape</label>
            </div>
          </>
        ) : (
          <>
            <div>
              <label for="t-width">Width (px)</label>
              <input
                id="t-width"
                type="number"
                min={1}
                max={4096}
                value={fields.width}
                onInput={(e) => set({ width: e.currentTarget.value })}
                {...field("width")}
              />
            </div>
            <div>
              <label for="t-height">Height (px)</label>
              <input
                id="t-height"
                type="number"
                min={1}
                max={4096}
                value={fields.height}
                onInput={(e) => set({ height: e.currentTarget.value })}
                {...field("height")}
              />
            </div>
          </>
        )}
      </div>
    </fieldset>
  );
}

/** One CodeMirror editor, made once; its text lives in `texts` (no re-render per keystroke). */
function CodePanel(props: {
  name: EditorName;
  title: string;
  language: Language;
  texts: { current: Texts };
  views: { current: Partial<Record<EditorName, EditorView>> };
  onEdit: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const { name, title, language, texts, views, onEdit } = props;
  useEffect(() => {
    const view = createEditor({
      parent: box.current!,
      doc: texts.current[name],
      language,
      label: title,
      onChange: (text) => {
        texts.current[name] = text;
        onEdit();
      },
    });
    views.current[name] = view;
    return () => view.destroy();
  }, []);
  return (
    <section class="code-panel" aria-labelledby={`code-${name}`}>
      <h2 id={`code-${name}`}>{title}</h2>
      <div ref={box} class="code" data-editor={name} />
    </section>
  );
}

function PreviewPane({ live, saved }: { live: LivePreview; saved?: { id: string; version: number } }) {
  const [stored, setStored] = useState<{ url: string } | { error: ApiError } | undefined>();
  useEffect(() => {
    if (!saved) return;
    versionPreview(saved.id, saved.version).then(
      (url) => setStored({ url }),
      (error: unknown) => setStored({ error: asApiError(error) }),
    );
  }, [saved?.id, saved?.version]);
  const image = live.url
    ? { url: live.url, alt: "Live preview of the draft", caption: "The last draft that rendered, with its sample data (not saved)." }
    : stored && "url" in stored
      ? { url: stored.url, alt: `Preview of version ${saved!.version}`, caption: `Version ${saved!.version} as saved, rendered with its sample data.` }
      : undefined;
  return (
    <aside class="preview-pane" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      <p class="help" role="status">
        {live.rendering ? "Rendering the draft…" : "Renders as you type, with the sample data; each render counts as one of the month's previews."}
      </p>
      {image && (
        <figure class={live.url ? "live" : undefined}>
          <img src={image.url} alt={image.alt} />
          <figcaption>{image.caption}</figcaption>
        </figure>
      )}
      {live.error && <Problem error={live.error} title="The draft does not render" />}
      {!live.url && !live.error && stored && "error" in stored && <Problem error={stored.error} title="No preview" />}
      {saved && <p class="help">Saving renders the new version with its sample data first: a template that does not render is not saved.</p>}
    </aside>
  );
}
