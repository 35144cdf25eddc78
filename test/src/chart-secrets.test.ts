import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { NATS_USERS } from "./test-support/chart-renders";
import { type K8sObject, ofKind, render } from "./test-support/helm";
import { MIGRATED } from "./test-support/workloads";

/** The values of the Secret: where they go, and nowhere else. */

describe("secrets stay in Secrets", () => {
  const secrets = {
    databaseAdminUrl: "postgres://pressroom:pw-db-3f9a71@db.internal:5432/pressroom",
    ...Object.fromEntries(
      MIGRATED.map((service) => [`databaseUrls.${service}`, `postgres://pressroom_${service}:pw-db-${service}-9c04@db.internal:5432/pressroom`]),
    ),
    outputSigningSecret: "sig-secret-5d1c0e2b",
    webhookSecretEncryptionKey: "8e4b6a09".repeat(8),
    stripeSecretKey: "sk_test_chart_7c2f",
    stripeWebhookSecret: "whsec_chart_a91d",
  };
  const natsPasswords = Object.fromEntries(NATS_USERS.map((s) => [s, `nats-pw-${s}-42e1`]));
  const objects = (): K8sObject[] =>
    render({
      set: [
        "billing.provider=stripe",
        "nats.auth.enabled=true",
        ...Object.entries(secrets).map(([key, value]) => `secrets.${key}=${value}`),
        ...Object.entries(natsPasswords).map(([service, value]) => `secrets.natsPasswords.${service}=${value}`),
      ],
    });
  const values = [...Object.values(secrets), ...Object.values(natsPasswords)];
  let all: K8sObject[];
  before(() => {
    all = objects();
  });

  it("the secret values set reach a Secret", () => {
    const inSecrets = ofKind<K8sObject & { data?: Record<string, string>; stringData?: Record<string, string> }>(all, "Secret")
      .flatMap((s) => [...Object.values(s.stringData ?? {}), ...Object.values(s.data ?? {}).map((v) => Buffer.from(v, "base64").toString("utf8"))])
      .join("\n");
    assert.deepEqual(
      values.filter((v) => !inSecrets.includes(v)),
      [],
    );
  });

  it("no ConfigMap, and no other object but a Secret, carries one", () => {
    const leaks = all
      .filter((o) => o.kind !== "Secret")
      .flatMap((o) => values.filter((v) => JSON.stringify(o).includes(v)).map((v) => `${o.kind}/${o.metadata.name} carries ${v}`));
    assert.deepEqual(leaks, []);
  });
});
