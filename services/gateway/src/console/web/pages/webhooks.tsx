import { useState } from "preact/hooks";
import { api, query, type ApiError, type DeliveryList } from "../api";
import { DeliveryTable } from "../deliveries";
import { Problem, Show, Time, asApiError, useLoad } from "../ui";

/** The key's webhook signing secret (shown on request), its rotation, and its recent callback deliveries with replay. */
export function Webhooks({ readOnly }: { readOnly: boolean }) {
  const [cursor, setCursor] = useState("");
  const deliveries = useLoad(() => api<DeliveryList>("GET", `/v1/webhooks/deliveries${query({ cursor, limit: 25 })}`), [cursor]);
  return (
    <>
      <h1>Webhooks</h1>
      <p class="lead">
        A job with a <code>webhook_url</code> calls it back when it ends, signed with this key's secret in <code>X-Service-Signature</code>: verify it before
        you trust the body.
      </p>
      <Secret readOnly={readOnly} />
      <section aria-labelledby="deliveries-title">
        <div class="heading-row">
          <h2 id="deliveries-title">Recent deliveries</h2>
          <button type="button" class="secondary" onClick={deliveries.reload}>
            Refresh
          </button>
        </div>
        <Show loaded={deliveries} what="the deliveries">
          {(page) =>
            page.data.length === 0 ? (
              <p class="empty">No callbacks yet: render with a webhook_url to get one.</p>
            ) : (
              <>
                <DeliveryTable deliveries={page.data} readOnly={readOnly} showJob onReplayed={() => setTimeout(deliveries.reload, 1_500)} />
                <nav class="pager" aria-label="Pages of deliveries">
                  {cursor && (
                    <button type="button" class="secondary" onClick={() => setCursor("")}>
                      Newest
                    </button>
                  )}
                  {page.next_cursor && (
                    <button type="button" class="secondary" onClick={() => setCursor(page.next_cursor!)}>
                      Older deliveries
                    </button>
                  )}
                </nav>
              </>
            )
          }
        </Show>
      </section>
    </>
  );
}

function Secret({ readOnly }: { readOnly: boolean }) {
  const [secret, setSecret] = useState<string | undefined>();
  const [previousUntil, setPreviousUntil] = useState<string | undefined>();
  const [confirming, setConfirming] = useState(false);
  const [problem, setProblem] = useState<ApiError | undefined>();
  const reveal = async () => {
    setProblem(undefined);
    try {
      setSecret((await api<{ secret: string }>("GET", "/v1/keys/webhook-secret")).secret);
    } catch (error) {
      setProblem(asApiError(error));
    }
  };
  const rotate = async () => {
    setProblem(undefined);
    setConfirming(false);
    try {
      const rotated = await api<{ secret: string; previous_secret_expires_at: string }>("POST", "/v1/keys/webhook-secret/rotate");
      setSecret(rotated.secret);
      setPreviousUntil(rotated.previous_secret_expires_at);
    } catch (error) {
      setProblem(asApiError(error));
    }
  };
  return (
    <section class="panel" aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret</h2>
      {secret ? (
        <output class="secret" aria-label="The webhook signing secret">
          {secret}
        </output>
      ) : (
        <p class="muted">Hidden. Reveal it to copy it into the code that verifies your callbacks.</p>
      )}
      <div class="actions">
        {secret ? (
          <button type="button" class="secondary" onClick={() => setSecret(undefined)}>
            Hide
          </button>
        ) : (
          <button type="button" onClick={() => void reveal()}>
            Reveal the secret
          </button>
        )}
        {!readOnly && !confirming && (
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>
            Rotate…
          </button>
        )}
      </div>
      {confirming && (
        <div class="confirm" role="group" aria-labelledby="rotate-question">
          <p id="rotate-question">
            Make a new secret? For 24 hours every callback is signed with both, the new one and this one, so your receiver can switch without missing one.
          </p>
          <div class="actions">
            <button type="button" onClick={() => void rotate()}>
              Rotate the secret
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Keep this one
            </button>
          </div>
        </div>
      )}
      {previousUntil && (
        <p class="notice" role="status">
          Rotated. Until <Time at={previousUntil} />, callbacks carry two signatures (<code>t=…,v1=&lt;new&gt;,v1=&lt;previous&gt;</code>): accept a callback
          when either matches; after that, only the new secret signs.
        </p>
      )}
      {problem && <Problem error={problem} />}
    </section>
  );
}
