import { X509Certificate } from "node:crypto";
import type { PeerCertificate } from "node:tls";

/**
 * Who may hold a certificate of a release: the six services and the operator CLI (`admin`).
 */
export const GRPC_PEERS = ["gateway", "identity", "metering", "render", "storage", "webhook", "admin"] as const;
export type GrpcPeer = (typeof GRPC_PEERS)[number];

/**
 * The deployment a gRPC certificate belongs to: a trust domain, the namespace and the release
 * (a Helm release in a cluster). A peer's certificate names it by one SPIFFE-style URI,
 * `spiffe://<trustDomain>/ns/<namespace>/release/<release>/service/<peer>`, its only URI name:
 * a certificate of another release, or of another team on the same issuer, names someone else.
 */
export interface GrpcRelease {
  trustDomain: string;
  namespace: string;
  release: string;
}

/** The release of a local stack (up.sh's, the tests' stacks): what ensureGrpcCertificates names by default. */
export const LOCAL_RELEASE: GrpcRelease = { trustDomain: "pressroom.local", namespace: "local", release: "pressroom" };

/** The URI a peer's certificate carries: spiffe://<trust domain>/ns/<namespace>/release/<release>/service/<peer>. */
export function peerIdentity(release: GrpcRelease, peer: GrpcPeer): string {
  return `spiffe://${release.trustDomain}/ns/${release.namespace}/release/${release.release}/service/${peer}`;
}

/**
 * Lower-case names only (DNS labels, Helm release names): a name with another character is
 * nobody's. Node writes a URI name holding a comma or a quote as a quoted string, which this refuses too.
 */
const IDENTITY = /^spiffe:\/\/([a-z0-9._-]+)\/ns\/([a-z0-9-]+)\/release\/([a-z0-9.-]+)\/service\/([a-z]+)$/;

/** The release and service a certificate's one URI name gives, or undefined unless it has exactly one of that form. */
function identityOf(subjectAltName: string | undefined): { release: GrpcRelease; service: string } | undefined {
  const uris = (subjectAltName ?? "").split(", ").filter((entry) => entry.startsWith("URI:"));
  if (uris.length !== 1) return undefined;
  const match = IDENTITY.exec(uris[0]!.slice("URI:".length));
  if (!match) return undefined;
  const [, trustDomain, namespace, release, service] = match;
  return { release: { trustDomain: trustDomain!, namespace: namespace!, release: release! }, service: service! };
}

const sameRelease = (a: GrpcRelease, b: GrpcRelease) => a.trustDomain === b.trustDomain && a.namespace === b.namespace && a.release === b.release;

/** The peer of `release` a certificate names, or undefined: no URI name, more than one, another release's, or no peer's. */
export function peerOf(certificate: Pick<PeerCertificate, "subjectaltname"> | undefined, release: GrpcRelease): GrpcPeer | undefined {
  const identity = identityOf(certificate?.subjectaltname);
  if (!identity || !sameRelease(identity.release, release)) return undefined;
  return (GRPC_PEERS as readonly string[]).includes(identity.service) ? (identity.service as GrpcPeer) : undefined;
}

/** The one URI name a certificate carries, for a log line about a refused one ("none" without one, "several" with more). */
export function presentedIdentity(certificate: Pick<PeerCertificate, "subjectaltname"> | undefined): string {
  const uris = (certificate?.subjectaltname ?? "").split(", ").filter((entry) => entry.startsWith("URI:"));
  return uris.length === 1 ? uris[0]!.slice("URI:".length) : uris.length === 0 ? "none" : "several";
}

/**
 * The release a process's own certificate (PEM) names: the one its peers must belong to.
 * Throws unless the certificate names a peer of one release.
 */
export function releaseOfCertificate(pem: Buffer | string, file: string): GrpcRelease {
  const identity = identityOf(new X509Certificate(pem).subjectAltName);
  if (!identity || !(GRPC_PEERS as readonly string[]).includes(identity.service)) {
    throw new Error(
      `the gRPC certificate ${file} names no peer of a release: it needs one URI name spiffe://<trust domain>/ns/<namespace>/release/<release>/service/<${GRPC_PEERS.join("|")}>`,
    );
  }
  return identity.release;
}
