import { useEffect, useState } from "preact/hooks";

/**
 * The console's routes live in the browser: every path under /console is the same page, which
 * shows what the path names. Links within the console change the path without a reload.
 */

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((listener) => listener());

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  notify();
  window.scrollTo(0, 0);
}

/** The current path and query; re-renders when either changes. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setVersion] = useState(0);
  useEffect(() => {
    const update = () => setVersion((v) => v + 1);
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return { path: location.pathname.replace(/\/+$/, "") || "/", query: new URLSearchParams(location.search) };
}

/** Follows plain clicks on links to console pages without a reload (new tabs, downloads and other pages load as usual). */
export function interceptLinks(): void {
  window.addEventListener("popstate", notify);
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = (event.target as Element | null)?.closest?.("a");
    if (!link || link.target || link.hasAttribute("download") || link.origin !== location.origin) return;
    if (!link.pathname.startsWith("/console") || link.pathname.startsWith("/console/assets")) return;
    event.preventDefault();
    navigate(`${link.pathname}${link.search}`);
  });
}

/** The parameters of `pattern` (":name" segments) in `path`, or undefined when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    if (part.startsWith(":")) params[part.slice(1)] = decodeURIComponent(got[i]!);
    else if (part !== got[i]) return undefined;
  }
  return params;
}
