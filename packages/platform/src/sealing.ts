/**
 * Values sealed to one service's key (issue 39, item 8): a secret a caller hands over (an
 * encryption password, a url source's credentials) is sealed by the service that receives it to
 * the public key of the one that uses it, and travels and rests sealed (NATS commands, events,
 * rows); only the holder of the private key opens it. ECIES over P-256: an ephemeral key pair
 * per value, ECDH with the recipient's public key, HKDF-SHA256 (bound to the `purpose`, so a
 * value sealed for one field opens for no other), AES-256-GCM. A sealed value is text:
 * `sealed:v1:<base64url of ephemeral public key (65 bytes) | nonce (12) | tag (16) | ciphertext>`.
 */
import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  X509Certificate,
  type KeyObject,
} from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const PREFIX = "sealed:v1:";
const CURVE = "prime256v1";
const POINT_BYTES = 65;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A recipient's public key from a PEM public key, a certificate (Helm can make one, not a bare public key) or a private key. */
export function sealingPublicKey(pem: string): KeyObject {
  if (pem.includes("BEGIN CERTIFICATE")) return new X509Certificate(pem).publicKey;
  return createPublicKey(pem);
}

export function sealingPrivateKey(pem: string): KeyObject {
  return createPrivateKey(pem);
}

export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}

function keyFor(shared: Buffer, ephemeral: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", shared, ephemeral, `pressroom-sealed-v1:${purpose}`, 32));
}

/** `plaintext` sealed to `recipient`'s public key, for `purpose` (e.g. "render.encrypt.owner_password"). */
export function seal(recipient: KeyObject, plaintext: string, purpose: string): string {
  const ephemeral = generateKeyPairSync("ec", { namedCurve: CURVE });
  const point = ephemeral.publicKey.export({ format: "jwk" });
  const raw = Buffer.concat([Buffer.from([4]), Buffer.from(point.x!, "base64url"), Buffer.from(point.y!, "base64url")]);
  const key = keyFor(diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipient }), raw, purpose);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(purpose));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([raw, nonce, cipher.getAuthTag(), ciphertext]).toString("base64url");
}

/** The plaintext of a value sealed for `purpose` to the public half of `privateKey`; throws on anything else (tampered, another key or purpose). */
export function unseal(privateKey: KeyObject, sealed: string, purpose: string): string {
  if (!isSealed(sealed)) throw new Error("not a sealed value");
  const bytes = Buffer.from(sealed.slice(PREFIX.length), "base64url");
  if (bytes.length < POINT_BYTES + NONCE_BYTES + TAG_BYTES) throw new Error("a sealed value too short");
  const raw = bytes.subarray(0, POINT_BYTES);
  const nonce = bytes.subarray(POINT_BYTES, POINT_BYTES + NONCE_BYTES);
  const tag = bytes.subarray(POINT_BYTES + NONCE_BYTES, POINT_BYTES + NONCE_BYTES + TAG_BYTES);
  const ephemeral = createPublicKey({
    key: { kty: "EC", crv: "P-256", x: raw.subarray(1, 33).toString("base64url"), y: raw.subarray(33).toString("base64url") },
    format: "jwk",
  });
  const key = keyFor(diffieHellman({ privateKey, publicKey: ephemeral }), raw, purpose);
  const decipher = createDecipheriv("aes-256-gcm", key, nonce);
  decipher.setAAD(Buffer.from(purpose));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(bytes.subarray(POINT_BYTES + NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
}

export interface SealingKeyFiles {
  /** The private key (PEM, mode 0600): the service that unseals. */
  key: string;
  /** Its public key (PEM): the services that seal. */
  publicKey: string;
}

/**
 * A P-256 sealing key pair under `dir` (`<name>.key`, `<name>.pub`), made unless both exist (local
 * stacks: beside the gRPC certificates). Each holder of a private key has its own `name`: render's
 * is "sealing", the webhook service's "destination-sealing".
 */
export function ensureSealingKey(dir: string, name = "sealing"): SealingKeyFiles {
  const files = { key: path.join(dir, `${name}.key`), publicKey: path.join(dir, `${name}.pub`) };
  if (existsSync(files.key) && existsSync(files.publicKey)) return files;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pair = generateKeyPairSync("ec", { namedCurve: CURVE });
  writeFileSync(files.key, pair.privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600 });
  writeFileSync(files.publicKey, pair.publicKey.export({ format: "pem", type: "spki" }), { mode: 0o644 });
  return files;
}

/** The key of a PEM file. */
export const readSealingPublicKey = (file: string): KeyObject => sealingPublicKey(readFileSync(file, "utf8"));
export const readSealingPrivateKey = (file: string): KeyObject => sealingPrivateKey(readFileSync(file, "utf8"));
