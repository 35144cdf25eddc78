import type * as dns from "node:dns";
import { readFileSync } from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import { WEB_PORTS, checkPort, createGuardedAgent, createGuardedHttpAgent, resolvePublic } from "@pressroom/platform/netguard";
import type { SubresourceBudget, SubresourceFetcher } from "../engine";

/** The most a single sub-request (an image, a font, a stylesheet) may download. */
const MAX_SUBRESOURCE_BYTES = 20 * 1024 * 1024;
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host", "content-length"]);

export interface SubresourceOptions {
  /** The ports a sub-request may reach (RENDER_SUBRESOURCE_PORTS); default 80 and 443. */
  ports?: readonly number[];
  /** Development and tests only: allow loopback targets. */
  allowLoopback?: boolean;
  /** Development and tests only: an extra CA file (PEM) to trust. */
  caFile?: string;
  /** Tests only: a resolver to use instead of the system's (e.g. names mapped to test addresses). */
  lookup?: typeof dns.lookup;
}

/**
 * Fetches a document's sub-requests for Chromium, which never touches the
 * network itself: a port not allowed is refused before anything is resolved,
 * every hop's host is resolved and every address checked
 * (the same rules as webhooks), the connection is pinned to the checked
 * address, and redirects are returned to Chromium unfollowed, so each hop
 * comes back here and is checked again.
 */
export function createSubresourceFetcher(options: SubresourceOptions = {}): SubresourceFetcher {
  const guard = { allowLoopback: options.allowLoopback ?? false, label: "document sub-request", lookup: options.lookup };
  const ports = options.ports ?? WEB_PORTS;
  const ca = options.caFile ? readFileSync(options.caFile) : undefined;
  const httpsAgent = createGuardedAgent({ ...guard, ca, keepAlive: true });
  const httpAgent = createGuardedHttpAgent({ ...guard, keepAlive: true });

  return async ({ url, method, headers, body, signal, budget }) => {
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error(`scheme ${url.protocol} is not allowed`);
    checkPort(url, ports, guard.label);
    await resolvePublic(url.hostname, guard);
    const outgoing: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name.toLowerCase())) outgoing[name] = value;
    const transport = url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const request = transport.request(url, { method, headers: outgoing, agent: url.protocol === "https:" ? httpsAgent : httpAgent, signal }, (response) => {
        let collected: BodyCollector;
        // A refused body fails the promise before the request is destroyed: its response may still end.
        const refuse = (err: unknown) => {
          reject(err as Error);
          request.destroy(err as Error);
        };
        try {
          collected = new BodyCollector(Number(response.headers["content-length"]), budget);
        } catch (err) {
          refuse(err);
          return;
        }
        response.on("data", (chunk: Buffer) => {
          try {
            collected.add(chunk);
          } catch (err) {
            refuse(err);
          }
        });
        response.on("end", () => {
          const responseHeaders: Record<string, string> = {};
          for (const [name, value] of Object.entries(response.headers)) {
            if (value === undefined || HOP_BY_HOP.has(name)) continue;
            responseHeaders[name] = Array.isArray(value) ? value.join(name === "set-cookie" ? "\n" : ", ") : value;
          }
          resolve({ status: response.statusCode ?? 502, headers: responseHeaders, body: collected.bytes() });
        });
        response.on("error", reject);
      });
      request.on("error", reject);
      request.end(body);
    });
  };
}

/**
 * A response body gathered without a second copy, counted against the job's
 * budget before it is held: with a Content-Length, all of it is counted at
 * once (a body the budget cannot hold fails before a byte is read) into one
 * buffer that each chunk is copied into and dropped; without one, chunk by
 * chunk, joined once at the end.
 */
class BodyCollector {
  private readonly whole: Buffer | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    announced: number,
    private readonly budget: SubresourceBudget,
  ) {
    if (!Number.isSafeInteger(announced) || announced <= 0) return;
    if (announced > MAX_SUBRESOURCE_BYTES) throw tooLarge();
    budget.take(announced);
    this.whole = Buffer.allocUnsafe(announced);
  }

  add(chunk: Buffer): void {
    if (this.size + chunk.length > MAX_SUBRESOURCE_BYTES) throw tooLarge();
    if (this.whole) {
      if (this.size + chunk.length > this.whole.length) throw new Error("sub-request longer than its Content-Length");
      chunk.copy(this.whole, this.size);
    } else {
      this.budget.take(chunk.length);
      this.chunks.push(chunk);
    }
    this.size += chunk.length;
  }

  bytes(): Buffer {
    if (this.whole) return this.whole.subarray(0, this.size);
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
  }
}

function tooLarge(): Error {
  return new Error(`sub-request larger than ${MAX_SUBRESOURCE_BYTES} bytes`);
}
