import { html } from "@codemirror/lang-html";
import { json, jsonParseLinter } from "@codemirror/lang-json";
import { lintGutter, linter, setDiagnostics, type Diagnostic } from "@codemirror/lint";
import { unifiedMergeView } from "@codemirror/merge";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { basicSetup } from "codemirror";

/**
 * The console's CodeMirror 6 editors: HTML with Handlebars, and JSON (the data schema, the sample
 * data), linted as it is typed; problems the API names at a line shown at that line; and a
 * read-only diff of two versions' sources.
 */

export type Language = "html" | "json";

const languageOf = (language: Language): Extension[] => (language === "html" ? [html()] : [json(), linter(jsonParseLinter(), { delay: 300 })]);

const labelled = (label: string) => EditorView.contentAttributes.of({ "aria-label": label });

/** CodeMirror writes its stylesheet into a <style> element: the page's Content-Security-Policy lets it in with this response's nonce. */
const nonce = EditorView.cspNonce.of(document.querySelector<HTMLMetaElement>('meta[name="style-nonce"]')?.content ?? "");

export function createEditor(options: { parent: HTMLElement; doc: string; language: Language; label: string; onChange: (text: string) => void }): EditorView {
  return new EditorView({
    parent: options.parent,
    state: EditorState.create({
      doc: options.doc,
      extensions: [
        basicSetup,
        nonce,
        ...languageOf(options.language),
        lintGutter(),
        labelled(options.label),
        EditorView.lineWrapping,
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
}

/** A problem at a line (1-based) and, when known, a column (1-based). */
export interface LineProblem {
  line: number;
  column?: number;
  message: string;
}

/** Shows the problems at their lines (replacing what was shown); none clears them. With `reveal`, the cursor moves to the first (not while the user types). */
export function showProblems(view: EditorView, problems: LineProblem[], reveal = true): void {
  const { doc } = view.state;
  const diagnostics: Diagnostic[] = problems.map((p) => {
    const line = doc.line(Math.min(Math.max(1, p.line), doc.lines));
    // From the column to the line's end; the whole line when the column is at its end (a parser that reached the end of the text).
    const at = Math.min(line.to, line.from + Math.max(0, (p.column ?? 1) - 1));
    const from = at < line.to ? at : line.from;
    return { from, to: line.to, severity: "error", message: p.message };
  });
  view.dispatch(setDiagnostics(view.state, diagnostics));
  if (reveal && diagnostics[0]) view.dispatch({ selection: { anchor: diagnostics[0].from }, scrollIntoView: true });
}

/** A read-only view of `changed` with what changed since `original` marked (deleted lines shown above the new ones). */
export function createDiff(options: { parent: HTMLElement; original: string; changed: string; language: Language; label: string }): EditorView {
  return new EditorView({
    parent: options.parent,
    state: EditorState.create({
      doc: options.changed,
      extensions: [
        basicSetup,
        nonce,
        options.language === "html" ? html() : json(),
        EditorState.readOnly.of(true),
        EditorView.editable.of(false),
        EditorView.lineWrapping,
        labelled(options.label),
        unifiedMergeView({ original: options.original, mergeControls: false, collapseUnchanged: { margin: 3, minSize: 6 } }),
      ],
    }),
  });
}
