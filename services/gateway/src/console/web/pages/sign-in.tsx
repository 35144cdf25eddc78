import { DEMO_API_KEY } from "@pressroom/domain/plans";
import { useState } from "preact/hooks";
import { api, type ApiError } from "../api";
import { Problem, asApiError } from "../ui";

/**
 * Sign in with an API key (exchanged at once for the session cookie: the page keeps no key), or
 * sign up for a free key through POST /v1/signup, shown once, then signed in with.
 */
export function SignIn({ notice, onSignedIn }: { notice: string; onSignedIn: () => Promise<void> }) {
  const [key, setKey] = useState("");
  const [email, setEmail] = useState("");
  const [issued, setIssued] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<{ where: "sign-in" | "sign-up"; error: ApiError } | undefined>();

  const signIn = async (apiKey: string) => {
    setBusy(true);
    setProblem(undefined);
    try {
      await api("POST", "/console/session", { api_key: apiKey.trim() });
      setKey("");
      setIssued("");
      await onSignedIn();
    } catch (error) {
      setProblem({ where: "sign-in", error: asApiError(error) });
    } finally {
      setBusy(false);
    }
  };

  const signUp = async () => {
    setBusy(true);
    setProblem(undefined);
    try {
      const created = await api<{ api_key: string }>("POST", "/v1/signup", { email });
      setIssued(created.api_key);
    } catch (error) {
      setProblem({ where: "sign-up", error: asApiError(error) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <h1>Sign in to the console</h1>
      <p class="lead">
        Your jobs, templates, usage and webhooks, with your API key. The key is exchanged for a session that lasts a few hours and that this page cannot read;
        sign out ends it.
      </p>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      <form
        class="panel"
        onSubmit={(event) => {
          event.preventDefault();
          void signIn(key);
        }}
      >
        <h2>Sign in</h2>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => void signIn(DEMO_API_KEY)}>
            Look around with the demo key
          </button>
        </div>
        <p class="help">The public demo key signs in read-only.</p>
        {problem?.where === "sign-in" && <Problem error={problem.error} title="Could not sign in" />}
      </form>

      <form
        class="panel"
        onSubmit={(event) => {
          event.preventDefault();
          void signUp();
        }}
      >
        <h2>No key yet?</h2>
        <label for="email">E-mail address</label>
        <input id="email" name="email" type="email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Get a free key
          </button>
        </div>
        {problem?.where === "sign-up" && <Problem error={problem.error} title="Could not sign up" />}
        {issued && (
          <div class="issued" role="status">
            <p>Your key, shown this once (Pressroom keeps only its hash). Copy it somewhere safe before you go on:</p>
            <output class="secret" aria-label="Your new API key">
              {issued}
            </output>
            <div class="actions">
              <button type="button" disabled={busy} onClick={() => void signIn(issued)}>
                Sign in with this key
              </button>
            </div>
          </div>
        )}
      </form>
    </>
  );
}
