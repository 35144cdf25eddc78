import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError } from "./api";

/** The small pieces every console page uses: loading data, showing an API error, times, statuses. */

export type Loaded<T> = { data?: T; error?: ApiError; loading: boolean; reload: () => void };

/** Loads with `load` whenever one of `deps` changes; keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error: asApiError(error), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return { ...state, reload: useCallback(() => setRound((r) => r + 1), []) };
}

export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, "CONNECTION_ERROR", "the server could not be reached", "Check the connection and try again.");
}

/** An API error as the API words it; a 429 says how long to wait. */
export function Problem({ error, title = "That did not work" }: { error: ApiError; title?: string }) {
  return (
    <div class="problems" role="alert">
      <p>{title}</p>
      <ul>
        <li>
          {error.message} <code>{error.code}</code>
        </li>
        <li>
          {error.hint}
          {error.retryAfter ? ` Try again in ${error.retryAfter} s.` : ""}
        </li>
      </ul>
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

/** The state of a load: its error, a first-load message, or its content. */
export function Show<T>({ loaded, what, children }: { loaded: Loaded<T>; what: string; children: (data: T) => ComponentChildren }) {
  if (loaded.error && !loaded.data) return <Problem error={loaded.error} title={`Could not load ${what}`} />;
  if (!loaded.data) return <Loading what={what} />;
  return <>{children(loaded.data)}</>;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const timeOfDay = new Intl.DateTimeFormat(undefined, { timeStyle: "medium" });
const shortDate = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });

/** A time in the reader's zone, with the exact instant in the element; `short`: the time of day, and the day when it is not today. */
export function Time({ at, short = false }: { at: string | null | undefined; short?: boolean }) {
  if (!at) return <span class="muted">–</span>;
  const date = new Date(at);
  if (!short) return <time dateTime={at}>{dateTime.format(date)}</time>;
  const today = date.toDateString() === new Date().toDateString();
  return (
    <time dateTime={at} title={dateTime.format(date)}>
      {today ? timeOfDay.format(date) : `${shortDate.format(date)}, ${timeOfDay.format(date)}`}
    </time>
  );
}

export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

/** A status word with its colour (and the word itself, so colour is never the only signal). */
export function Badge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
