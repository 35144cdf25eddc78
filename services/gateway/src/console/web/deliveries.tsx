import { useState } from "preact/hooks";
import { api, type ApiError, type Delivery } from "./api";
import { Badge, Problem, Time, asApiError } from "./ui";

/**
 * Callback deliveries, one row per attempt (GET /v1/webhooks/deliveries), each with its replay:
 * the same callback, the same event id, signed afresh (POST …/{id}/replay).
 */
interface DeliveryTableProps {
  deliveries: Delivery[];
  readOnly: boolean;
  /** After a replay was asked for: the list has a new delivery. */
  onReplayed: () => void;
  /** Each delivery's job, on the page of all of them. */
  showJob: boolean;
}

export function DeliveryTable({ deliveries, readOnly, onReplayed, showJob }: DeliveryTableProps) {
  const [message, setMessage] = useState<{ ok: string } | { error: ApiError } | undefined>();
  const replay = async (delivery: Delivery) => {
    setMessage(undefined);
    try {
      const replayed = await api<Delivery>("POST", `/v1/webhooks/deliveries/${delivery.id}/replay`);
      setMessage({ ok: `Replaying ${delivery.event_id} as attempt ${replayed.attempt}.` });
      onReplayed();
    } catch (error) {
      setMessage({ error: asApiError(error) });
    }
  };
  return (
    <>
      <div class="table-scroll">
        <table class="deliveries">
          <caption class="visually-hidden">Callback deliveries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Attempt</th>
              <th scope="col">Status</th>
              <th scope="col">Response</th>
              <th scope="col">Took</th>
              <th scope="col">When</th>
              <th scope="col">Next retry</th>
              <th scope="col">Callback</th>
              {!readOnly && (
                <th scope="col">
                  <span class="visually-hidden">Replay</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {deliveries.map((d) => (
              <tr key={d.id}>
                <td>{d.attempt}</td>
                <td>
                  <Badge status={d.status} />
                </td>
                <td>{d.response_status ?? "–"}</td>
                <td>{d.duration_ms === null ? "–" : `${d.duration_ms} ms`}</td>
                <td>
                  <Time at={d.created_at} short />
                </td>
                <td>
                  <Time at={d.next_retry_at} short />
                </td>
                <td class="ids">
                  {d.event_type} <code>{d.event_id}</code>
                  {showJob && (
                    <>
                      {" "}
                      of <a href={`/console/jobs/${d.job_id}`}>{d.job_id}</a>
                    </>
                  )}
                </td>
                {!readOnly && (
                  <td>
                    <button type="button" class="secondary small" onClick={() => void replay(d)} aria-label={`Replay attempt ${d.attempt} of ${d.event_id}`}>
                      Replay
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {message && "ok" in message && (
        <p class="notice" role="status">
          {message.ok}
        </p>
      )}
      {message && "error" in message && <Problem error={message.error} title="Could not replay" />}
    </>
  );
}
