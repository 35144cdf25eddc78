import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { evaluation, FREE_UPGRADES } from "./test-support/chart-renders";
import { type K8sObject, ofKind, renderError } from "./test-support/helm";
import { allContainers } from "./test-support/workloads";

/**
 * What the chart names, whatever the release is called (issue 45): every name valid for its
 * kind, a StatefulSet's within the 52 characters Kubernetes allows it (its pods carry a
 * controller-revision-hash label of the name and a 10-character hash, within a label's 63), and
 * every image joined from image.registry as one reference.
 */

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** The problems of one render's names. */
function nameProblems(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const o of objects) {
    const { name } = o.metadata;
    const where = `${o.kind}/${name}`;
    if (seen.has(where)) problems.push(`${where} twice`);
    seen.add(where);
    if (!DNS_SUBDOMAIN.test(name) || name.length > 253) problems.push(`${where}: not a DNS subdomain`);
    if (["Service", "Job", "Deployment", "StatefulSet"].includes(o.kind) && (!DNS_LABEL.test(name) || name.length > 63))
      problems.push(`${where}: not a DNS label`);
    if (o.kind === "StatefulSet" && name.length > 52) problems.push(`${where}: ${name.length} characters, over a StatefulSet's 52`);
    const labels = {
      ...o.metadata.labels,
      ...((o.spec as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined)?.template?.metadata?.labels ?? {}),
    };
    for (const [key, value] of Object.entries(labels)) if (value.length > 63 || !LABEL_VALUE.test(value)) problems.push(`${where}: label ${key}=${value}`);
    const commonName = (o.spec as { commonName?: string } | undefined)?.commonName;
    if (o.kind === "Certificate" && commonName && commonName.length > 64)
      problems.push(`${where}: commonName of ${commonName.length} characters, over X.509's 64`);
  }
  return problems;
}

describe("names within Kubernetes' limits, whatever the release is called (issue 45)", () => {
  const longest = "r".repeat(53);
  const cases: [string, { release?: string; set?: string[] }][] = [
    ["the longest release name helm allows", { release: longest }],
    ["a long release name that contains the chart's", { release: `pressroom-${"x".repeat(43)}` }],
    ["a 63-character fullnameOverride", { set: [`fullnameOverride=${"f".repeat(63)}`] }],
    ["a fullnameOverride whose cut ends in a hyphen", { set: [`fullnameOverride=${"a".repeat(40)}-${"b".repeat(20)}`] }],
  ];

  for (const [what, options] of cases) {
    it(`${what}: every name valid for its kind, StatefulSets within 52 characters`, () => {
      const objects = evaluation({ ...options, set: [...(options.set ?? []), "metrics.serviceMonitor.enabled=true", "metrics.prometheusRule.enabled=true"] });
      assert.ok(ofKind(objects, "StatefulSet").length >= 2, "the bundled NATS and PostgreSQL are StatefulSets");
      assert.deepEqual(nameProblems(objects), []);
    });
  }

  it("the default release keeps its names (pressroom-<component>)", () => {
    assert.deepEqual(
      ofKind(evaluation(), "StatefulSet")
        .map((s) => s.metadata.name)
        .sort(),
      ["pressroom-nats", "pressroom-postgresql"],
    );
    assert.deepEqual(
      ofKind(evaluation({ set: ["fullnameOverride=pdf"] }), "StatefulSet")
        .map((s) => s.metadata.name)
        .sort(),
      ["pdf-nats", "pdf-postgresql"],
    );
  });

  it("refuses a fullnameOverride that cannot start a Service's name", () => {
    assert.match(renderError({ set: [FREE_UPGRADES, "fullnameOverride=Pressroom"] }), /fullnameOverride/);
  });
});

describe("images joined from image.registry (issue 45)", () => {
  const images = (set: string[]) =>
    [...new Set(allContainers(evaluation({ set })).map(({ container }) => container.image))].filter((i) => i.includes("pressroom/"));

  it("with or without a trailing slash, the registry and the repository are one reference", () => {
    for (const registry of ["registry.example.com", "registry.example.com/", "registry.example.com:5000/team"]) {
      const made = images([`image.registry=${registry}`, "image.tag=1.2.3"]);
      const base = registry.replace(/\/$/, "");
      assert.ok(made.length >= 6, made.join(", "));
      for (const image of made) assert.match(image, new RegExp(`^${base.replace(/[.]/g, "\\.")}/pressroom/[a-z]+:1\\.2\\.3$`), registry);
    }
  });

  it("without a registry, the repository alone", () => {
    for (const image of images([])) assert.match(image, /^pressroom\/[a-z]+:0\.1\.0$/);
  });
});
