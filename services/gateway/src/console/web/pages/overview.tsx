import { PAID_PLANS, PLANS, PLAN_ORDER, type PlanId } from "@pressroom/domain/plans";
import { useState } from "preact/hooks";
import { api, query, type DailyUsage, type Session, type Usage } from "../api";
import { DailyChart } from "../chart";
import { Problem, Show, asApiError, useLoad, type Loaded } from "../ui";

const number = new Intl.NumberFormat("en-US");
const day = (iso: string) => iso.slice(0, 10);

/** The key's standing: plan, the period's quota, renders per day, limits in use now, and the way up. */
export function Overview({ session }: { session: Session }) {
  const usage = useLoad(() => api<Usage>("GET", "/v1/keys/usage"), []);
  return (
    <>
      <h1>Overview</h1>
      <Show loaded={usage} what="your usage">
        {(u) => <Standing usage={u} session={session} />}
      </Show>
    </>
  );
}

function Standing({ usage, session }: { usage: Usage; session: Session }) {
  const from = day(usage.period.start);
  const to = new Date().toISOString().slice(0, 10);
  const days: Loaded<DailyUsage> = useLoad(() => api("GET", `/v1/keys/usage/daily${query({ from, to })}`), [from, to]);
  const plan = PLANS[usage.plan as PlanId];
  return (
    <>
      <div class="tiles">
        <section class="tile" aria-labelledby="plan-title">
          <h2 id="plan-title">Plan</h2>
          <p class="big">{plan?.name ?? usage.plan}</p>
          <p class="muted">{plan && plan.priceUsd > 0 ? `${plan.priceUsd} USD a month` : "free"}</p>
        </section>
        <section class="tile" aria-labelledby="quota-title">
          <h2 id="quota-title">Renders this period</h2>
          <p class="big">
            {number.format(usage.renders.used)} <span class="muted">of {number.format(usage.renders.limit)}</span>
          </p>
          <meter min={0} max={usage.renders.limit} value={usage.renders.used} aria-label="Renders used this period" />
          <p class="muted">
            {number.format(usage.renders.remaining)} left until {day(usage.period.end)} (UTC)
          </p>
        </section>
        <section class="tile" aria-labelledby="rate-title">
          <h2 id="rate-title">Requests per minute</h2>
          <p class="big">
            {usage.rate_limit.limit - usage.rate_limit.remaining} <span class="muted">of {usage.rate_limit.limit} in use</span>
          </p>
          <p class="muted">{usage.rate_limit.remaining} left in the last 60 s</p>
        </section>
        <section class="tile" aria-labelledby="concurrency-title">
          <h2 id="concurrency-title">Renders at once</h2>
          <p class="big">
            {usage.concurrency.in_flight} <span class="muted">of {usage.concurrency.limit} running</span>
          </p>
          <p class="muted">Templates stored: up to {plan ? number.format(plan.templates) : "–"}</p>
        </section>
      </div>
      <h2>Renders per day</h2>
      <Show loaded={days} what="renders per day">
        {(d) => <DailyChart days={d.data} caption={`Jobs that ended each day from ${from} to ${to} (UTC), succeeded and failed`} />}
      </Show>
      <Upgrade current={usage.plan as PlanId} readOnly={session.key_prefix.startsWith("pr_demo_")} />
    </>
  );
}

/** The plans above the current one, each to buy through the checkout (POST /v1/billing/checkout). */
function Upgrade({ current, readOnly }: { current: PlanId; readOnly: boolean }) {
  const above = PAID_PLANS.filter((id) => PLAN_ORDER.indexOf(id) > PLAN_ORDER.indexOf(current));
  const [choice, setChoice] = useState<PlanId | undefined>(above[0]);
  const [problem, setProblem] = useState<ReturnType<typeof asApiError> | undefined>();
  const [busy, setBusy] = useState(false);
  if (above.length === 0) return <p class="muted">You are on the largest plan.</p>;
  const checkout = async () => {
    setBusy(true);
    setProblem(undefined);
    try {
      const session = await api<{ checkout_url: string }>("POST", "/v1/billing/checkout", { plan: choice });
      location.assign(session.checkout_url);
    } catch (error) {
      setProblem(asApiError(error));
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="upgrade-title">
      <h2 id="upgrade-title">Upgrade</h2>
      {readOnly ? (
        <p class="muted">The demo key cannot be upgraded: sign up for a key of your own.</p>
      ) : (
        <form
          class="upgrade"
          onSubmit={(event) => {
            event.preventDefault();
            void checkout();
          }}
        >
          <fieldset>
            <legend>Plan</legend>
            {above.map((id) => (
              <label key={id} class="choice">
                <input type="radio" name="plan" value={id} checked={choice === id} onChange={() => setChoice(id)} />
                <span>
                  <strong>{PLANS[id].name}</strong>, {PLANS[id].priceUsd} USD a month: {number.format(PLANS[id].rendersPerMonth)} renders a month,{" "}
                  {number.format(PLANS[id].requestsPerMinute)} requests a minute, {PLANS[id].concurrentRenders} at once
                </span>
              </label>
            ))}
          </fieldset>
          <div class="actions">
            <button type="submit" disabled={busy || !choice}>
              Go to checkout
            </button>
          </div>
          {problem && <Problem error={problem} title="Could not start the checkout" />}
        </form>
      )}
    </section>
  );
}
