import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A self-signed certificate for 127.0.0.1, localhost and the other names given, made by openssl. */
export function selfSignedCert(names: string[] = []): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "webhook-tls-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-keyout",
        path.join(dir, "key.pem"),
        "-out",
        path.join(dir, "cert.pem"),
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        `subjectAltName=${["IP:127.0.0.1", "DNS:localhost", ...names.map((name) => `DNS:${name}`)].join(",")}`,
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(path.join(dir, "key.pem"), "utf8"), cert: readFileSync(path.join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
