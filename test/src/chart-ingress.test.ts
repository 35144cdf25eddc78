import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Context } from "koa";
import { clientIp, TrustedProxies } from "../../services/gateway/src/client-ip";
import { evaluation, rendered } from "./test-support/chart-renders";
import { type K8sObject, ofKind } from "./test-support/helm";
import { deploymentOf, effectiveEnv } from "./test-support/workloads";

/**
 * The production example behind ingress-nginx (issue 45): the controller lets through every
 * body the gateway takes and waits as long as the gateway may stay silent on a sync request,
 * and the gateway, trusting the controller's pods alone, counts signups by the client's address.
 */

const SIZE = /^(\d+)([kKmMgG]?)$/;
/** An nginx size (client_max_body_size) in bytes. */
const nginxBytes = (size: string): number => {
  const [, n, unit] = SIZE.exec(size) ?? assert.fail(`not an nginx size: ${size}`);
  return Number(n) * ({ "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 } as Record<string, number>)[unit!.toLowerCase()]!;
};

describe("the production example behind ingress-nginx (issue 45)", () => {
  const ingressOf = (objects: K8sObject[]) => ofKind(objects, "Ingress")[0] ?? assert.fail("no Ingress");
  const gatewayEnv = (objects: K8sObject[]) => effectiveEnv(deploymentOf(objects, "gateway").spec.template.spec.containers[0]!, objects);

  it("passes every body the gateway takes, up to a MiB more (the gateway answers those 422 itself), and outwaits a sync request", () => {
    for (const [name, objects] of [
      ["production", rendered("production")],
      [
        "a larger body and a longer wait",
        evaluation({ set: ["gateway.ingress.enabled=true", "gateway.ingress.className=nginx", "gateway.maxBodyBytes=5000000", "gateway.syncWaitSeconds=100"] }),
      ],
    ] as const) {
      const annotations = ingressOf(objects).metadata.annotations ?? {};
      const env = gatewayEnv(objects);
      const body = nginxBytes(annotations["nginx.ingress.kubernetes.io/proxy-body-size"] ?? "1m");
      assert.ok(body > Number(env.MAX_BODY_BYTES), `${name}: nginx's ${body} bytes ≤ the gateway's ${env.MAX_BODY_BYTES}`);
      assert.ok(body <= Number(env.MAX_BODY_BYTES) + 2 * 1024 ** 2, `${name}: nginx lets ${body} bytes through`);
      for (const timeout of ["proxy-read-timeout", "proxy-send-timeout"]) {
        const seconds = Number(annotations[`nginx.ingress.kubernetes.io/${timeout}`] ?? 60);
        assert.ok(seconds * 1000 > Number(env.SYNC_WAIT_MS), `${name}: ${timeout} ${seconds} s ≤ the sync wait ${env.SYNC_WAIT_MS} ms`);
      }
    }
  });

  it("annotations given in values win over the derived ones", () => {
    const objects = evaluation({
      set: [
        "gateway.ingress.enabled=true",
        "gateway.ingress.className=nginx",
        "gateway.ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-body-size=8m",
      ],
    });
    assert.equal(ingressOf(objects).metadata.annotations?.["nginx.ingress.kubernetes.io/proxy-body-size"], "8m");
  });

  it("the gateway believes X-Forwarded-For from the controller's pods only, and counts the client's address", () => {
    const trusted = new TrustedProxies(gatewayEnv(rendered("production")).TRUSTED_PROXIES ?? "");
    const request = (peer: string, forwarded?: string) =>
      ({
        req: { socket: { remoteAddress: peer } },
        get: (name: string) => (name.toLowerCase() === "x-forwarded-for" ? (forwarded ?? "") : ""),
      }) as unknown as Context;
    const controller = "10.244.3.17";
    assert.equal(clientIp(request(controller, "203.0.113.9"), trusted), "203.0.113.9", "the client the controller saw");
    assert.equal(clientIp(request(controller, "198.51.100.1, 203.0.113.9"), trusted), "203.0.113.9", "a forged address the client sent is left of it");
    assert.equal(clientIp(request("203.0.113.50", "198.51.100.1"), trusted), "203.0.113.50", "a client reaching the gateway directly is its own address");
  });
});
