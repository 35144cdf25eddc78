import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { GrpcTls } from "./grpc";
import { GRPC_PEERS, type GrpcPeer, type GrpcRelease, LOCAL_RELEASE, peerIdentity } from "./grpc-identity";

const run = promisify(execFile);

/** Each peer's files: the CA certificate, its own certificate and its private key (PEM). */
export type GrpcCertificates = Record<GrpcPeer, GrpcTls>;

/** Local certificates last ten years: nothing renews them, and a new CA is one `rm -r .data/grpc-tls` away. */
const DAYS = "3650";
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

async function openssl(args: string[]): Promise<void> {
  await run("openssl", args, { env: { PATH: process.env.PATH } }).catch((err: Error & { stderr?: string }) => {
    throw new Error(`openssl ${args[0]} failed (is Debian's openssl installed?): ${err.stderr ?? err.message}`);
  });
}

interface KeyPair {
  cert: string;
  key: string;
}

/**
 * Makes a certificate and its new P-256 key at these paths unless both exist (and the certificate
 * carries `uri`, when given): for `subject`, with these extensions, signed by `issuer` (by its own key without one).
 */
async function ensureCertificate(files: KeyPair, subject: string, extensions: string[], issuer?: KeyPair, uri?: string): Promise<void> {
  const current = () => !uri || new X509Certificate(readFileSync(files.cert)).subjectAltName === `URI:${uri}`;
  if (existsSync(files.cert) && existsSync(files.key) && current()) return;
  const signer = issuer ? ["-CA", issuer.cert, "-CAkey", issuer.key] : [];
  const addext = extensions.flatMap((extension) => ["-addext", extension]);
  await openssl(["req", "-x509", "-new", ...EC_KEY, "-keyout", files.key, "-out", files.cert, ...signer, "-days", DAYS, "-subj", subject, ...addext]);
}

/**
 * The deployment's private CA and a certificate per gRPC peer (the six
 * services and the operator CLI, `admin`) under `dir`, made with the openssl
 * CLI where missing and kept otherwise (up.sh's `.data/grpc-tls`, kept across
 * restarts; a peer's certificate naming another release is made again). Each
 * certificate names its peer of `release` by its one URI name (peerIdentity),
 * and serves as server and client certificate. Keys are P-256, readable by
 * their owner only.
 */
export async function ensureGrpcCertificates(
  dir: string,
  peers: readonly GrpcPeer[] = GRPC_PEERS,
  release: GrpcRelease = LOCAL_RELEASE,
): Promise<GrpcCertificates> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = { cert: path.join(dir, "ca.crt"), key: path.join(dir, "ca.key") };
  await ensureCertificate(ca, "/O=Pressroom/CN=Pressroom local gRPC CA", [
    "basicConstraints=critical,CA:TRUE,pathlen:0",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  const files = {} as GrpcCertificates;
  await Promise.all(
    peers.map(async (peer) => {
      const cert = path.join(dir, `${peer}.crt`);
      const key = path.join(dir, `${peer}.key`);
      const uri = peerIdentity(release, peer);
      await ensureCertificate(
        { cert, key },
        `/O=Pressroom/CN=${peer}`,
        [`subjectAltName=URI:${uri}`, "basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature", "extendedKeyUsage=serverAuth,clientAuth"],
        ca,
        uri,
      );
      files[peer] = { ca: ca.cert, cert, key };
    }),
  );
  return files;
}

/** The settings that give a service (or the CLI) its own certificate: GRPC_TLS_CA, GRPC_TLS_CERT, GRPC_TLS_KEY. */
export function grpcTlsEnv(files: GrpcTls): NodeJS.ProcessEnv {
  return { GRPC_TLS_CA: files.ca, GRPC_TLS_CERT: files.cert, GRPC_TLS_KEY: files.key };
}
