import { meter } from "@pressroom/platform";
import type { IdempotentAdmitResult } from "./idempotency.repository";

const decisions = meter().createCounter("pressroom.admission.decisions", {
  unit: "{decision}",
  description:
    "Admission decisions by outcome (admitted, rate_limited, quota_exceeded, concurrency_exceeded, idempotent_replay, idempotency_key_reused) and request (render: an accepted render asks for quota and a slot; preview: a template preview asks for its own quota and a slot; test: a test-mode render or image asks for the day's test allowance and a slot; other: the rate window only).",
});

export function recordDecision(decision: IdempotentAdmitResult["decision"], request: "render" | "preview" | "test" | "other"): void {
  decisions.add(1, { outcome: decision === "allowed" ? "admitted" : decision, request });
}
