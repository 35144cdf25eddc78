import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";

/**
 * The local webhook receiver of `npm run webhooks:listen` and what the local
 * stack (up.sh) needs to call it: a certificate for 127.0.0.1 and localhost
 * made once under .data/webhook-listen, which the webhook service trusts
 * (WEBHOOK_EXTRA_CA_FILE), loopback callbacks allowed, and the receiver's port
 * in place of 443 for loopback hosts (WEBHOOK_DEV_TARGET_PORT): a callback to
 * https://127.0.0.1/<any path> reaches the receiver.
 */

/** The receiver's port unless PRESSROOM_WEBHOOKS_LISTEN_PORT says another. */
export const DEFAULT_LISTEN_PORT = 8443;

export interface ListenerFiles {
  certFile: string;
  keyFile: string;
}

export function listenPort(env: NodeJS.ProcessEnv): number {
  const port = Number(env.PRESSROOM_WEBHOOKS_LISTEN_PORT ?? DEFAULT_LISTEN_PORT);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error("PRESSROOM_WEBHOOKS_LISTEN_PORT must be a port number (1 to 65535)");
  return port;
}

/** The receiver's certificate and key in `dir`, made by openssl the first time (self-signed, ten years). */
export function ensureListenerCertificate(dir: string): ListenerFiles {
  const files = { certFile: path.join(dir, "cert.pem"), keyFile: path.join(dir, "key.pem") };
  if (existsSync(files.certFile) && existsSync(files.keyFile)) return files;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "3650",
      "-keyout",
      files.keyFile,
      "-out",
      files.certFile,
      "-subj",
      "/CN=Pressroom local webhook receiver",
      "-addext",
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ],
    { stdio: "ignore" },
  );
  return files;
}

/** The webhook service's settings that make it deliver loopback callbacks to the receiver (development only). */
export function listenerSettings(files: ListenerFiles, port: number): NodeJS.ProcessEnv {
  return { WEBHOOK_ALLOW_LOOPBACK: "true", WEBHOOK_EXTRA_CA_FILE: files.certFile, WEBHOOK_DEV_TARGET_PORT: String(port) };
}
