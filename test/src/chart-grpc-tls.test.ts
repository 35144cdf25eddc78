import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GRPC_PEERS } from "@pressroom/platform";
import { evaluation, everyRender, FREE_UPGRADES, rendered } from "./test-support/chart-renders";
import { component, type K8sObject, NAMESPACE, ofKind, RELEASE, renderError } from "./test-support/helm";
import { deploymentOf, effectiveEnv, GRPC_PORT, type Workload, workloads } from "./test-support/workloads";

/** Mutual TLS on every gRPC hop: the certificates, who mounts which, the chart's CA. */

interface Certificate extends K8sObject {
  spec: {
    secretName: string;
    isCA?: boolean;
    commonName?: string;
    dnsNames?: string[];
    uris?: string[];
    duration?: string;
    renewBefore?: string;
    usages?: string[];
    privateKey?: { algorithm?: string; rotationPolicy?: string };
    issuerRef: { name: string; kind?: string; group?: string };
  };
}

describe("mutual TLS on every gRPC hop (issue 30)", () => {
  const GRPC_TLS_DIR = "/etc/pressroom/grpc-tls";
  const podOf = (objects: K8sObject[], peer: string) =>
    peer === "admin"
      ? ofKind<Workload>(objects, "Deployment").find((d) => component(d) === "admin")!.spec.template.spec
      : deploymentOf(objects, peer).spec.template.spec;
  /** The Secrets a pod mounts or reads. */
  const secretsOf = (objects: K8sObject[], peer: string): string[] => {
    const pod = podOf(objects, peer);
    return [
      ...(pod.volumes ?? []).flatMap((v) => (v.secret ? [v.secret.secretName] : [])),
      ...pod.containers.flatMap((c) => [
        ...(c.envFrom ?? []).flatMap((e) => (e.secretRef ? [e.secretRef.name] : [])),
        ...(c.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : [])),
      ]),
    ];
  };
  const certificates = (objects: K8sObject[]) => ofKind<Certificate>(objects, "Certificate");
  const identity = (peer: string, trustDomain = "pressroom.internal", release = RELEASE) =>
    `spiffe://${trustDomain}/ns/${NAMESPACE}/release/${release}/service/${peer}`;
  const peerCertificate = (objects: K8sObject[], peer: string) =>
    certificates(objects).find((c) => c.spec.uris?.some((uri) => uri.endsWith(`/service/${peer}`)));
  /** A cert-manager duration (e.g. 72h, 1h30m) in hours. */
  const hours = (duration: string) =>
    [...duration.matchAll(/([0-9.]+)(h|m|s)/g)].reduce((sum, [, n, unit]) => sum + Number(n) / (unit === "h" ? 1 : unit === "m" ? 60 : 3600), 0);

  it("cert-manager issues each service and the admin pod a certificate naming it, for server and client use, from the chart's CA by default", () => {
    const objects = rendered("evaluation");
    const ca = certificates(objects).find((c) => c.spec.isCA);
    assert.ok(ca, "the chart's own CA Certificate");
    const issuers = ofKind<K8sObject & { spec: { ca?: { secretName: string }; selfSigned?: object } }>(objects, "Issuer");
    const caIssuer = issuers.find((i) => i.spec.ca?.secretName === ca.spec.secretName);
    assert.ok(caIssuer, "an Issuer signs with the CA's Secret");
    assert.ok(
      issuers.some((i) => i.spec.selfSigned && i.metadata.name === ca.spec.issuerRef.name),
      "the CA is self-signed",
    );
    for (const peer of GRPC_PEERS) {
      const certificate = peerCertificate(objects, peer);
      assert.ok(certificate, `no Certificate for ${peer}`);
      assert.deepEqual(certificate.spec.uris, [identity(peer)], `${peer}: one name, its own in this release and namespace`);
      assert.equal(certificate.spec.dnsNames, undefined, `${peer}: no DNS name another release's certificate would share`);
      assert.deepEqual([...(certificate.spec.usages ?? [])].sort(), ["client auth", "digital signature", "server auth"]);
      assert.equal(certificate.spec.isCA ?? false, false);
      assert.equal(certificate.spec.issuerRef.name, caIssuer.metadata.name, `${peer}: issued by the chart's CA`);
      assert.equal(certificate.spec.privateKey?.rotationPolicy, "Always", `${peer}: a renewal makes a new key`);
    }
    assert.equal(certificates(objects).length, GRPC_PEERS.length + 1);
  });

  it("a peer's certificate lives days, not a year, and is renewed a day ahead (issue 39)", () => {
    for (const name of ["evaluation", "production"] as const) {
      for (const peer of GRPC_PEERS) {
        const { duration, renewBefore } = peerCertificate(rendered(name), peer)!.spec;
        assert.equal(hours(duration!), 72, `${name}: ${peer} lives ${duration}`);
        assert.equal(hours(renewBefore!), 24, `${name}: ${peer} is renewed ${renewBefore} ahead`);
      }
    }
  });

  it("each release names its peers by its own trust domain, namespace and release, so two releases' certificates never name the same caller (issue 39)", () => {
    const other = evaluation({ release: "staging" });
    for (const peer of GRPC_PEERS) {
      assert.deepEqual(peerCertificate(other, peer)?.spec.uris, [identity(peer, "pressroom.internal", "staging")]);
      assert.deepEqual(peerCertificate(rendered("production"), peer)?.spec.uris, [identity(peer, "pressroom.example.com")]);
    }
    assert.match(renderError({ set: [FREE_UPGRADES, "grpcTls.trustDomain=Pressroom/evil"] }), /trustDomain/);
  });

  it("the chart's CA keeps its key when cert-manager renews it, so peers renewed before and after it trust each other (issue 45)", () => {
    const ca = certificates(rendered("evaluation")).find((c) => c.spec.isCA)!;
    assert.equal(ca.spec.privateKey?.rotationPolicy, "Never", "see packages/platform/src/grpc-ca-rotation.test.ts: a new key would break peers");
  });

  it("the issuer is the one values name (the production example: a ClusterIssuer); the chart then makes no CA", () => {
    const objects = rendered("production");
    for (const peer of GRPC_PEERS)
      assert.deepEqual(peerCertificate(objects, peer)?.spec.issuerRef, { name: "internal-ca", kind: "ClusterIssuer", group: "cert-manager.io" });
    assert.equal(
      certificates(objects).some((c) => c.spec.isCA),
      false,
    );
    assert.deepEqual(ofKind(objects, "Issuer"), []);
  });

  it("each service mounts its own certificate Secret and no other peer's; only the admin pod holds the admin certificate", () => {
    for (const name of ["evaluation", "production", "pre-made gRPC certificates"] as const) {
      const objects = rendered(name);
      const secretOf = (peer: string) =>
        name === "pre-made gRPC certificates" ? `tls-${peer}` : (peerCertificate(objects, peer)?.spec.secretName ?? `no Certificate for ${peer}`);
      const everyCertificateSecret = new Set(GRPC_PEERS.map(secretOf));
      for (const peer of GRPC_PEERS) {
        const mounted = secretsOf(objects, peer).filter((secret) => everyCertificateSecret.has(secret));
        assert.deepEqual(mounted, [secretOf(peer)], `${name}: ${peer} mounts ${mounted.join(", ")}`);
      }
      const holders = workloads(objects).filter((w) => (w.spec.template.spec.volumes ?? []).some((v) => v.secret?.secretName === secretOf("admin")));
      assert.deepEqual(holders.map(component), ["admin"], `${name}: the admin certificate is mounted by ${holders.map((w) => w.metadata.name).join(", ")}`);
    }
  });

  it("every service and the admin pod read their certificate from the mount; the servers listen on every interface", () => {
    for (const [name, objects] of everyRender()) {
      for (const peer of GRPC_PEERS) {
        const pod = podOf(objects, peer);
        const container = pod.containers[0]!;
        const env = effectiveEnv(container, objects);
        assert.deepEqual(
          [env.GRPC_TLS_CA, env.GRPC_TLS_CERT, env.GRPC_TLS_KEY],
          [`${GRPC_TLS_DIR}/ca.crt`, `${GRPC_TLS_DIR}/tls.crt`, `${GRPC_TLS_DIR}/tls.key`],
          `${name}: ${peer}`,
        );
        const mount = container.volumeMounts?.find((m) => m.mountPath === GRPC_TLS_DIR);
        assert.ok(mount?.readOnly, `${name}: ${peer} mounts its certificate read-only at ${GRPC_TLS_DIR}`);
        assert.ok(
          (pod.volumes ?? []).some((v) => v.name === mount.name && v.secret),
          `${name}: ${peer}'s mount is a Secret`,
        );
        if (["identity", "metering", "render", "storage"].includes(peer)) assert.equal(env.GRPC_HOST, "0.0.0.0", `${name}: ${peer} listens beyond loopback`);
      }
    }
  });

  it("with pre-made Secrets, no Certificate is rendered, and a missing Secret name fails the install naming it", () => {
    assert.deepEqual(certificates(rendered("pre-made gRPC certificates")), []);
    assert.match(
      renderError({
        set: [FREE_UPGRADES, "grpcTls.source=secrets", ...GRPC_PEERS.filter((peer) => peer !== "admin").map((peer) => `grpcTls.secrets.${peer}=tls-${peer}`)],
      }),
      /grpcTls\.secrets\.admin is required with grpcTls\.source=secrets/,
    );
  });

  it("the admin pod does not run unless scaled up, and runs the CLI's image with identity's and metering's addresses", () => {
    const admin = (objects: K8sObject[]) => ofKind<Workload>(objects, "Deployment").find((d) => component(d) === "admin")!;
    assert.equal(admin(rendered("evaluation")).spec.replicas, 0);
    const objects = rendered("pre-made gRPC certificates");
    assert.equal(admin(objects).spec.replicas, 1);
    const env = effectiveEnv(admin(objects).spec.template.spec.containers[0]!, objects);
    const address = (service: string) => `${ofKind(objects, "Service").find((s) => component(s) === service)!.metadata.name}:${GRPC_PORT}`;
    assert.deepEqual([env.IDENTITY_ADDR, env.METERING_ADDR], [address("identity"), address("metering")]);
    assert.match(admin(objects).spec.template.spec.containers[0]!.image, /pressroom\/identity:/);
  });
});
