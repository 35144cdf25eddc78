import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/** One callback as the receiver got it: the raw body exactly as sent. */
export interface ReceivedCallback {
  at: number;
  /** POST (a callback) or PUT (a destination's output). */
  method: string;
  path: string;
  headers: Record<string, string>;
  rawBody: string;
  /** The body's bytes, as sent. */
  body: Buffer;
  status: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answers only once this settles: a slow endpoint (the request is recorded on arrival). */
  until?: Promise<unknown>;
}

/** Chooses the reply to the n-th request (0-based) on a path. */
export type Behaviour = (n: number, request: ReceivedCallback) => Reply;

/**
 * A real HTTPS webhook receiver (callbacks' POSTs, destinations' PUTs) on 127.0.0.1 with a self-signed certificate
 * made by openssl. The webhook service trusts it through
 * WEBHOOK_EXTRA_CA_FILE and reaches its port through WEBHOOK_DEV_TARGET_PORT
 * (the public API only accepts https URLs on the default port, and binding
 * 443 needs root), both development/test-only settings; see env().
 */
export class WebhookReceiver {
  readonly received: ReceivedCallback[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly dir = mkdtempSync(path.join(tmpdir(), "pressroom-receiver-"));
  readonly caFile = path.join(this.dir, "cert.pem");
  readonly keyFile = path.join(this.dir, "key.pem");
  private server: Server | undefined;
  port = 0;

  constructor() {
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
        this.keyFile,
        "-out",
        this.caFile,
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stdio: "ignore" },
    );
  }

  /** The webhook service's settings that let it call this receiver (development/test only). */
  env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {
      WEBHOOK_ALLOW_LOOPBACK: "true",
      WEBHOOK_EXTRA_CA_FILE: this.caFile,
      WEBHOOK_DEV_TARGET_PORT: String(this.port),
      ...extra,
    };
  }

  /** The webhook_url of a path: default port, as the public API requires. */
  url(pathname: string): string {
    return `https://127.0.0.1${pathname}`;
  }

  on(pathname: string, behaviour: Behaviour): void {
    this.behaviours.set(pathname, behaviour);
  }

  requestsOn(pathname: string): ReceivedCallback[] {
    return this.received.filter((r) => r.path.split("?")[0] === pathname);
  }

  async start(port = 0): Promise<number> {
    const server = createServer({ key: readFileSync(this.keyFile), cert: readFileSync(this.caFile) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
        const body = Buffer.concat(chunks);
        const method = req.method ?? "";
        const request: ReceivedCallback = { at: Date.now(), method, path: req.url ?? "", headers, rawBody: body.toString("utf8"), body, status: 0 };
        const pathname = request.path.split("?")[0]!;
        const n = this.requestsOn(pathname).length;
        const reply = method === "POST" || method === "PUT" ? (this.behaviours.get(pathname)?.(n, request) ?? { status: 200 }) : { status: 405 };
        request.status = reply.status;
        this.received.push(request);
        const answer = () => res.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? "");
        if (reply.until) void reply.until.then(answer, answer);
        else answer();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this.port;
  }

  /** Stops listening: callbacks get "connection refused" until up(). */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    await this.start(this.port);
  }

  async waitFor(pathname: string, count: number, timeoutMs: number): Promise<ReceivedCallback[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requestsOn(pathname).length < count) {
      if (Date.now() > deadline) throw new Error(`${pathname}: ${this.requestsOn(pathname).length} of ${count} callbacks after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.requestsOn(pathname);
  }

  async stop(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls until check returns a value (not undefined), or fails after timeoutMs. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms${last ? ` (last error: ${(last as Error).message})` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
