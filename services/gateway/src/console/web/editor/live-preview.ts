import type { EditorView } from "@codemirror/view";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "../api";
import { asApiError } from "../ui";
import { showProblems } from "./codemirror";
import { LIVE_PREVIEW_DELAY_MS, draftPreview } from "./preview";
import { placeProblem } from "./problems";

type EditorName = "html" | "schema" | "sample";

/** What the live preview shows: the last draft that rendered, whether a newer one is rendering, and what stopped the newest. */
export interface LivePreview {
  url?: string;
  rendering: boolean;
  error?: ApiError;
}

/**
 * The editor's live preview: a moment after the last change (`changes` changes with each), the
 * draft (the body as it would be saved, or the problem that stops it) is rendered by POST
 * /v1/templates/preview, admitted and counted like any preview; a newer change cancels the one in
 * flight. A problem the API names at a line (a source that does not compile, a schema or sample
 * data that fails) is shown at that line without moving the cursor, and cleared by a draft that
 * renders. `enabled` false: nothing is rendered (the draft is still the saved version).
 */
export function useLivePreview(options: {
  changes: unknown[];
  enabled: boolean;
  draft: () => Record<string, unknown> | ApiError;
  texts: () => { schema: string; sample: string };
  views: () => Partial<Record<EditorName, EditorView>>;
}): LivePreview {
  const [live, setLive] = useState<LivePreview>({ rendering: false });
  const shown = useRef<string | undefined>(undefined);
  const latest = useRef(options);
  latest.current = options;

  useEffect(() => {
    if (!options.enabled) return;
    const controller = new AbortController();
    const timer = setTimeout(() => void render(controller.signal), LIVE_PREVIEW_DELAY_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [options.enabled, ...options.changes]);

  useEffect(() => () => (shown.current ? URL.revokeObjectURL(shown.current) : undefined), []);

  /** Clears what the last draft's problem marked, and marks `error`'s line when it names one. */
  const place = (error?: ApiError) => {
    const views = latest.current.views();
    for (const view of Object.values(views)) if (view) showProblems(view, [], false);
    if (!error) return;
    const placed = error.status === 422 && error.code === "PAYLOAD_INVALID" ? placeProblem(error, latest.current.texts()) : undefined;
    if (placed && "editor" in placed && views[placed.editor]) showProblems(views[placed.editor]!, [placed.problem], false);
  };

  async function render(signal: AbortSignal): Promise<void> {
    const body = latest.current.draft();
    // JSON that does not parse is marked by its editor's own linter as it is typed.
    if (body instanceof ApiError) return setLive((l) => ({ ...l, rendering: false, error: body }));
    setLive((l) => ({ ...l, rendering: true }));
    try {
      const url = await draftPreview(body, signal);
      if (signal.aborted) return URL.revokeObjectURL(url);
      if (shown.current) URL.revokeObjectURL(shown.current);
      shown.current = url;
      place();
      setLive({ url, rendering: false });
    } catch (err) {
      if (signal.aborted) return;
      const error = asApiError(err);
      place(error);
      setLive((l) => ({ ...l, rendering: false, error }));
    }
  }

  return live;
}
