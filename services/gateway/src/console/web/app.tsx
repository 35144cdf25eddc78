import { useEffect, useState } from "preact/hooks";
import { api, onUnauthorized, setCsrfToken, type Session } from "./api";
import { Editor } from "./pages/editor";
import { JobPage } from "./pages/job";
import { Jobs } from "./pages/jobs";
import { Overview } from "./pages/overview";
import { SignIn } from "./pages/sign-in";
import { TemplatePage } from "./pages/template";
import { Templates } from "./pages/templates";
import { Webhooks } from "./pages/webhooks";
import { match, navigate, useLocation } from "./router";
import { Loading } from "./ui";

const SECTIONS = [
  { href: "/console", label: "Overview", owns: (path: string) => path === "/console" },
  { href: "/console/jobs", label: "Jobs", owns: (path: string) => path.startsWith("/console/jobs") },
  { href: "/console/templates", label: "Templates", owns: (path: string) => path.startsWith("/console/templates") },
  { href: "/console/webhooks", label: "Webhooks", owns: (path: string) => path.startsWith("/console/webhooks") },
];

/** The page a path names, for a signed-in session. */
function page(path: string, session: Session) {
  // The public demo key signs in read-only (the gateway refuses its changes); its pages offer none.
  const readOnly = session.key_prefix.startsWith("pr_demo_");
  if (path === "/console") return <Overview session={session} />;
  if (path === "/console/jobs") return <Jobs />;
  if (path === "/console/templates") return <Templates readOnly={readOnly} />;
  if (path === "/console/templates/new") return <Editor />;
  if (path === "/console/webhooks") return <Webhooks readOnly={readOnly} />;
  const job = match("/console/jobs/:id", path);
  if (job) return <JobPage id={job.id!} readOnly={readOnly} />;
  const edit = match("/console/templates/:id/edit", path);
  if (edit) return <Editor id={edit.id} />;
  const template = match("/console/templates/:id", path);
  if (template) return <TemplatePage id={template.id!} readOnly={readOnly} />;
  return (
    <>
      <h1>Not found</h1>
      <p>
        No console page is at <code>{path}</code>. <a href="/console">Go to the overview</a>.
      </p>
    </>
  );
}

export function App() {
  const { path } = useLocation();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState("");

  const signedIn = async () => {
    const current = await api<Session>("GET", "/console/session");
    setCsrfToken(current.csrf_token);
    setSession(current);
    return current;
  };

  useEffect(() => {
    onUnauthorized(() => {
      setSession(null);
      setNotice("Your session ended (it expired, you signed out elsewhere, or the key was revoked). Sign in again.");
    });
    signedIn().catch(() => setSession(null));
  }, []);

  useEffect(() => {
    const away = session === null && path !== "/console/sign-in";
    if (away) navigate(`/console/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
    if (session && path === "/console/sign-in") navigate("/console", { replace: true });
  }, [session, path]);

  const signOut = async () => {
    await api("DELETE", "/console/session").catch(() => undefined);
    setCsrfToken("");
    setNotice("Signed out.");
    setSession(null);
  };

  if (session === undefined) {
    return (
      <main id="content" class="page">
        <Loading what="the console" />
      </main>
    );
  }
  if (session === null || path === "/console/sign-in") {
    return (
      <main id="content" class="page narrow">
        <SignIn
          notice={notice}
          onSignedIn={async () => {
            setNotice("");
            await signedIn();
            const next = new URLSearchParams(location.search).get("next");
            navigate(next?.startsWith("/console") && !next.startsWith("/console/sign-in") ? next : "/console", { replace: true });
          }}
        />
      </main>
    );
  }
  return (
    <>
      <nav class="console-nav" aria-label="Console">
        <ul>
          {SECTIONS.map((section) => (
            <li key={section.href}>
              <a href={section.href} aria-current={section.owns(path) ? "page" : undefined}>
                {section.label}
              </a>
            </li>
          ))}
        </ul>
        <div class="who">
          <span>
            <code>{session.key_prefix}…</code> · {session.plan}
            {session.key_prefix.startsWith("pr_demo_") ? " (read-only)" : ""}
          </span>
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </nav>
      <main id="content" class="page">
        {page(path, session)}
      </main>
    </>
  );
}
