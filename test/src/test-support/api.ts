import { request as httpRequest } from "node:http";
import { connect } from "node:net";

/** One HTTP exchange as the e2e tests saw it; every response is checked against the OpenAPI document. */
export interface Exchange {
  method: string;
  /** Path and query, as sent. */
  path: string;
  requestHeaders: Record<string, string>;
  /** The parsed JSON request body, when one was sent as JSON. */
  requestJson?: unknown;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface ApiResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface RequestOptions {
  /** Sends Authorization: Bearer <key>. */
  key?: string;
  /** Sent as JSON with Content-Type: application/json. */
  json?: unknown;
  /** Sent as is (set content-type yourself). */
  body?: string | Buffer | AsyncIterable<Buffer>;
  headers?: Record<string, string>;
  /** Local address to connect from (e.g. 127.0.0.2, to be another client IP on loopback). */
  localAddress?: string;
}

const SECRET_IN_TEXT = [/\bpr_(?:live|demo|test)_[A-Za-z0-9_]{16,}/g, /\bwhsec_[A-Za-z0-9+/_=-]{20,}/g, /[?&]sig=([0-9a-fA-F]{32,})/g];

/**
 * A small HTTP client for the gateway that records every exchange, and every
 * secret it saw (API keys, webhook secrets, URL signatures), for the OpenAPI
 * and log-leak checks at the end of each suite.
 */
export class Api {
  readonly exchanges: Exchange[] = [];
  private readonly seen = new Set<string>();

  constructor(readonly baseUrl: string) {}

  /** Remembers a secret obtained another way (gRPC, CLI) for the log-leak check. */
  remember(secret: string): void {
    if (secret) this.seen.add(secret);
  }

  /** Every key, webhook secret and URL signature sent or received so far. */
  secrets(): string[] {
    return [...this.seen];
  }

  private harvest(text: string): void {
    for (const pattern of SECRET_IN_TEXT) {
      for (const match of text.matchAll(pattern)) this.seen.add(match[1] ?? match[0]);
    }
  }

  get(path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    return this.request("GET", path, options);
  }

  post(path: string, json: unknown, options: RequestOptions = {}): Promise<ApiResponse> {
    return this.request("POST", path, { ...options, json });
  }

  /** Fetches an absolute URL the API returned (a signed output URL). */
  download(url: string, options: RequestOptions & { method?: string } = {}): Promise<ApiResponse> {
    const parsed = new URL(url);
    if (parsed.origin !== new URL(this.baseUrl).origin) throw new Error(`${url} is not on ${this.baseUrl}`);
    return this.request(options.method ?? "GET", `${parsed.pathname}${parsed.search}`, options);
  }

  request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    let body: string | Buffer | AsyncIterable<Buffer> | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers["content-type"] ??= "application/json";
    }
    if (typeof body === "string" || Buffer.isBuffer(body)) headers["content-length"] ??= String(Buffer.byteLength(body));
    this.harvest(`${path} ${headers.authorization ?? ""}`);
    const url = new URL(path, this.baseUrl);
    return new Promise<ApiResponse>((resolve, reject) => {
      let settled = false;
      const req = httpRequest(
        { host: url.hostname, port: url.port, method, path: `${url.pathname}${url.search}`, headers, localAddress: options.localAddress, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", (err) => {
            if (!settled) reject(err);
            settled = true;
          });
          res.on("end", () => {
            settled = true;
            const responseBody = Buffer.concat(chunks);
            const responseHeaders: Record<string, string> = {};
            for (const [name, value] of Object.entries(res.headers))
              if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(", ") : value;
            const text = responseBody.toString("utf8");
            let json: unknown;
            if (/^application\/json\b/.test(responseHeaders["content-type"] ?? "")) {
              try {
                json = JSON.parse(text);
              } catch {
                json = undefined;
              }
            }
            this.harvest(text);
            this.exchanges.push({
              method,
              path,
              requestHeaders: headers,
              requestJson: options.json,
              status: res.statusCode ?? 0,
              headers: responseHeaders,
              body: responseBody,
            });
            resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: responseBody, text, json });
          });
        },
      );
      // The server may answer (422, body too large) and close before the upload ends.
      req.on("error", (err) => {
        if (!settled) {
          settled = true;
          reject(err);
        }
      });
      if (body === undefined) req.end();
      else if (typeof body === "string" || Buffer.isBuffer(body)) req.end(body);
      else {
        void (async () => {
          try {
            for await (const chunk of body) if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
            req.end();
          } catch {
            // The server closed the connection mid-upload; its answer (if any) is what counts.
          }
        })();
      }
    });
  }
}

/** Sends raw bytes on a fresh connection and returns what came back before the server closed it. */
export function rawHttp(port: number, payload: string, waitMs = 1_000): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", ...rest] = received.split("\r\n\r\n");
      const [statusLine = "", ...headerLines] = head.split("\r\n");
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: rest.join("\r\n\r\n") });
    });
    socket.write(payload);
    setTimeout(() => socket.end(), waitMs);
  });
}

/** Asserts the exact three-field error shape, and returns the code. */
export function errorShape(response: ApiResponse): { error: string; code: string; hint: string } {
  const body = response.json as Record<string, unknown> | undefined;
  if (!body || typeof body !== "object") throw new Error(`not a JSON error body (HTTP ${response.status}): ${response.text.slice(0, 200)}`);
  const keys = Object.keys(body).sort().join(",");
  if (keys !== "code,error,hint") throw new Error(`error body has fields ${keys}: ${response.text}`);
  for (const field of ["error", "code", "hint"]) {
    if (typeof body[field] !== "string" || !(body[field] as string).length) throw new Error(`error.${field} is not a non-empty string: ${response.text}`);
  }
  return body as { error: string; code: string; hint: string };
}
