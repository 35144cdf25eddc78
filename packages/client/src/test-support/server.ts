import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach } from "node:test";
import { Pressroom } from "../index";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Handler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

/** A real HTTP server on 127.0.0.1 with an ephemeral port that records every request. */
export class TestServer {
  readonly requests: RecordedRequest[] = [];
  handler: Handler = (_request, response) => json(response, 404, { error: "no such route", code: "NOT_FOUND", hint: "Set a handler." });
  #server: Server;
  #baseUrl = "";

  private constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const recorded: RecordedRequest = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
        this.requests.push(recorded);
        Promise.resolve(this.handler(recorded, res)).catch((err: unknown) => {
          res.statusCode = 599;
          res.end(String(err));
        });
      });
    });
  }

  static async start(): Promise<TestServer> {
    const server = new TestServer();
    await new Promise<void>((resolve) => server.#server.listen(0, "127.0.0.1", resolve));
    const { port } = server.#server.address() as AddressInfo;
    server.#baseUrl = `http://127.0.0.1:${port}`;
    return server;
  }

  get baseUrl(): string {
    return this.#baseUrl;
  }

  get last(): RecordedRequest {
    const last = this.requests.at(-1);
    if (!last) throw new Error("no request recorded");
    return last;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve, reject) => this.#server.close((err) => (err ? reject(err) : resolve())));
  }
}

/**
 * Registers a suite's server: started before its tests, closed after them; each test starts with
 * no request recorded and a fresh client of it, handed to `each`.
 */
export function serverForSuite(each: (server: TestServer, client: Pressroom) => void, apiKey = "pr_test_key_0123456789"): void {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start();
  });
  after(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    each(server, new Pressroom({ apiKey, baseUrl: server.baseUrl }));
  });
}

export function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers });
  response.end(text);
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
