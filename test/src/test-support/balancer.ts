import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small HTTP load balancer on loopback standing for a Service's endpoints and the ingress
 * controller in front of them: it sends each request to the next backend that is in rotation,
 * over kept-alive connections (as an ingress controller's upstream keepalive does), and a
 * backend is in rotation while its readiness probe (/readyz on its health port) answers 200,
 * probed every `probeMs` as the kubelet and the endpoints controller would (one failure takes
 * it out). A backend it cannot reach answers 502; none in rotation, 503.
 */
export interface Backend {
  name: string;
  httpPort: number;
  healthPort: number;
}

export class Balancer {
  private server?: Server;
  private readonly backends = new Map<string, { backend: Backend; ready: boolean; agent: Agent; pinnedInFlight: number }>();
  private next = 0;
  private probing?: NodeJS.Timeout;
  /** Requests each backend was sent. */
  readonly sent = new Map<string, number>();

  constructor(private readonly probeMs = 200) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => this.forward(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const probe = async () => {
      await Promise.all([...this.backends.values()].map(async (entry) => (entry.ready = await this.probe(entry.backend))));
      this.probing = setTimeout(() => void probe(), this.probeMs);
    };
    await probe();
  }

  add(backend: Backend): void {
    this.backends.set(backend.name, { backend, ready: false, agent: new Agent({ keepAlive: true }), pinnedInFlight: 0 });
  }

  remove(name: string): void {
    this.backends.get(name)?.agent.destroy();
    this.backends.delete(name);
  }

  /** Whether a backend is in rotation now. */
  ready(name: string): boolean {
    return this.backends.get(name)?.ready ?? false;
  }

  /** Requests pinned to a backend (x-balancer-pin) that it is answering now. */
  pinnedInFlight(name: string): number {
    return this.backends.get(name)?.pinnedInFlight ?? 0;
  }

  async stop(): Promise<void> {
    clearTimeout(this.probing);
    for (const { agent } of this.backends.values()) agent.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async probe(backend: Backend): Promise<boolean> {
    try {
      return (await fetch(`http://127.0.0.1:${backend.healthPort}/readyz`, { signal: AbortSignal.timeout(1_000) })).ok;
    } catch {
      return false;
    }
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    // A test may pin a request to one backend in rotation (the one about to be stopped).
    const pinned = this.backends.get(String(req.headers["x-balancer-pin"] ?? ""));
    const inRotation = pinned?.ready ? [pinned] : [...this.backends.values()].filter((entry) => entry.ready);
    if (inRotation.length === 0) {
      res.writeHead(503).end("no backend in rotation");
      return;
    }
    const entry = inRotation[this.next++ % inRotation.length]!;
    const pin = entry === pinned ? 1 : 0;
    entry.pinnedInFlight += pin;
    this.sent.set(entry.backend.name, (this.sent.get(entry.backend.name) ?? 0) + 1);
    const done = () => {
      entry.pinnedInFlight -= pin;
    };
    const headers = { ...req.headers, "x-forwarded-for": req.socket.remoteAddress ?? "" };
    const upstream = request({ host: "127.0.0.1", port: entry.backend.httpPort, method: req.method, path: req.url, headers, agent: entry.agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, { ...answer.headers, "x-backend": entry.backend.name });
      answer.pipe(res);
      answer.once("end", done);
    });
    upstream.once("error", (err) => {
      done();
      if (!res.headersSent) res.writeHead(502).end(`backend ${entry.backend.name}: ${err.message}`);
      else res.destroy(err);
    });
    req.pipe(upstream);
  }
}
