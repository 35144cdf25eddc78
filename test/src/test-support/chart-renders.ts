import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { GRPC_PEERS } from "@pressroom/platform";
import { CHART_DIR, type K8sObject, PRODUCTION_VALUES, render, type RenderOptions } from "./helm";
import type { Container } from "./workloads";

/** The chart's test value files (ci/*.yaml), which helm lint and every render run over. */
export const ciValues = existsSync(path.join(CHART_DIR, "ci"))
  ? readdirSync(path.join(CHART_DIR, "ci"))
      .filter((f) => f.endsWith(".yaml"))
      .sort()
      .map((f) => path.join(CHART_DIR, "ci", f))
  : [];

/**
 * The one value a plain install must add, as the evaluation command in deploy/kubernetes.md does:
 * the local payment provider's free upgrades, accepted (issue 30; without it the chart refuses).
 */
export const FREE_UPGRADES = "billing.local.allowFreeUpgrades=true";

/** The chart with its defaults and the free upgrades accepted, plus `options`. */
export const evaluation = (options: RenderOptions & { fresh?: boolean } = {}): K8sObject[] =>
  render({ ...options, set: [FREE_UPGRADES, ...(options.set ?? [])] });

export const NATS_USERS = ["gateway", "identity", "metering", "render", "storage", "webhook", "provision"] as const;

/** The renders every schema and policy assertion runs over. */
const renders = {
  evaluation: () => evaluation(),
  production: () => render({ valuesFiles: [PRODUCTION_VALUES] }),
  "KEDA off": () => evaluation({ set: ["render.keda.enabled=false"] }),
  "pre-made gRPC certificates": () =>
    evaluation({ set: ["grpcTls.source=secrets", "admin.replicas=1", ...GRPC_PEERS.map((peer) => `grpcTls.secrets.${peer}=tls-${peer}`)] }),
  "everything on": () =>
    render({
      set: [
        "gateway.ingress.enabled=true",
        "gateway.ingress.host=pdf.example.com",
        "gateway.autoscaling.enabled=true",
        "networkPolicy.enabled=true",
        "nats.auth.enabled=true",
        "billing.provider=stripe",
        "metrics.serviceMonitor.enabled=true",
        "metrics.prometheusRule.enabled=true",
        "metrics.grafanaDashboard.enabled=true",
        "secrets.stripeSecretKey=sk_test_everything",
        "secrets.stripeWebhookSecret=whsec_everything",
        ...NATS_USERS.map((user) => `secrets.natsPasswords.${user}=pw-${user}`),
      ],
    }),
} satisfies Record<string, () => K8sObject[]>;

export type RenderName = keyof typeof renders;

const cache = new Map<string, K8sObject[]>();

/** One of the named renders, made once per test file. */
export function rendered(name: RenderName): K8sObject[] {
  if (!cache.has(name)) cache.set(name, renders[name]());
  return cache.get(name)!;
}

/** Every named render, with its name. */
export const everyRender = (): [string, K8sObject[]][] => (Object.keys(renders) as RenderName[]).map((name) => [name, rendered(name)]);

/** Whether a container runs one of Pressroom's own images. */
export const pressroomImage = (c: Container): boolean => /(^|\/)pressroom\/[a-z]+(:|@|$)/.test(c.image);
