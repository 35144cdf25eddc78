import { readFileSync } from "node:fs";
import * as https from "node:https";
import { createGuardedAgent, NetGuardError, type GuardedAgentOptions, type Logger } from "@pressroom/platform";
import { destinationUrlProblem, webhookUrlProblem } from "@pressroom/domain";
import type { Config } from "../config";

/** What one POST came to. `status` is 0 when no response arrived. */
export interface PostResult {
  status: number;
  /** The raw Retry-After header, when the receiver sent one. */
  retryAfter?: string;
  /** Why no (2xx) response came, in words safe to show the customer: never the URL. */
  error?: string;
  /** True when retrying cannot help: the URL is unusable or its host is not a public address. */
  permanent?: boolean;
}

export interface PosterOptions {
  /** A 2xx must arrive within this time, from the start of the connection. */
  timeoutMs: number;
  /** The same for a PUT to a destination, which sends a whole document first (default: timeoutMs). */
  putTimeoutMs?: number;
  /** Development and tests only. */
  allowLoopback?: boolean;
  /** Development and tests only: an extra CA (PEM), added to the public roots. */
  ca?: string | Buffer;
  /** Development and tests only: connect to this port instead of 443 when the URL's host is loopback (127.0.0.0/8, [::1], localhost). */
  devTargetPort?: number;
  /** The resolver behind the network guard; for tests. */
  lookup?: GuardedAgentOptions["lookup"];
}

export interface Poster {
  /** A callback: POST to a webhook_url. */
  post(url: string, body: string, headers: Record<string, string>): Promise<PostResult>;
  /** An output: PUT to a destination's url, by the same guard and rules. */
  put(url: string, body: Uint8Array, headers: Record<string, string>): Promise<PostResult>;
  close(): void;
}

/** The poster the service's settings describe; says loudly when a development or test setting is on. */
export function configuredPoster(
  config: Pick<
    Config,
    "WEBHOOK_TIMEOUT_MS" | "WEBHOOK_DESTINATION_TIMEOUT_MS" | "WEBHOOK_ALLOW_LOOPBACK" | "WEBHOOK_EXTRA_CA_FILE" | "WEBHOOK_DEV_TARGET_PORT"
  >,
  logger: Logger,
): Poster {
  if (config.WEBHOOK_ALLOW_LOOPBACK || config.WEBHOOK_EXTRA_CA_FILE || config.WEBHOOK_DEV_TARGET_PORT) {
    logger.warn(
      { allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK, extraCa: Boolean(config.WEBHOOK_EXTRA_CA_FILE), devTargetPort: config.WEBHOOK_DEV_TARGET_PORT ?? null },
      "development/test webhook settings are on: never use them in production",
    );
  }
  return createPoster({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    putTimeoutMs: config.WEBHOOK_DESTINATION_TIMEOUT_MS,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
    ...(config.WEBHOOK_EXTRA_CA_FILE ? { ca: readFileSync(config.WEBHOOK_EXTRA_CA_FILE) } : {}),
    ...(config.WEBHOOK_DEV_TARGET_PORT ? { devTargetPort: config.WEBHOOK_DEV_TARGET_PORT } : {}),
  });
}

/** The most of a response body that is read (and thrown away) before the socket is closed. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** A URL host that names this machine: the only one a development target port applies to (others keep 443). */
const isLoopbackHost = (hostname: string) => /^127(\.\d{1,3}){3}$/.test(hostname) || hostname === "[::1]" || hostname === "localhost";

function truncate(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A description of a failed request for the job's history. The URL (it may carry a token) never appears. */
export function describeError(err: unknown, timeoutMs: number): { error: string; permanent: boolean } {
  if (err instanceof NetGuardError || (err as { code?: string })?.code === "ERR_NETGUARD_BLOCKED") {
    return { error: truncate((err as Error).message), permanent: true };
  }
  if (err instanceof TimeoutError) return { error: `no response within ${timeoutMs / 1_000} s`, permanent: false };
  const e = err as NodeJS.ErrnoException;
  const code = typeof e?.code === "string" ? e.code : undefined;
  if (code === "ENOTFOUND") return { error: "ENOTFOUND: the host name does not resolve", permanent: false };
  const message = typeof e?.message === "string" ? e.message : String(err);
  return { error: truncate(code && !message.includes(code) ? `${code}: ${message}` : message), permanent: false };
}

class TimeoutError extends Error {}

/**
 * Sends callbacks (and destinations' PUTs) with node:https through the network guard's agent: every
 * resolved address is checked and the socket is pinned to the checked
 * address; IP literals are classified before connecting. Redirects are never
 * followed (node:https does not follow them; a 3xx is just a failed attempt).
 */
export function createPoster(options: PosterOptions): Poster {
  const agentFor = (label: string) => {
    const agentOptions: GuardedAgentOptions = { allowLoopback: options.allowLoopback ?? false, label, keepAlive: false };
    if (options.ca !== undefined) agentOptions.ca = options.ca;
    if (options.lookup) agentOptions.lookup = options.lookup;
    return createGuardedAgent(agentOptions);
  };
  // One agent per kind of target, so a refusal names what was refused.
  const agents = { POST: agentFor("webhook host"), PUT: agentFor("destination host") };

  function send(method: "POST" | "PUT", raw: string, payload: Uint8Array, headers: Record<string, string>, timeoutMs: number): Promise<PostResult> {
    // Checked again at delivery time, by the same rules as at acceptance.
    const problem = method === "POST" ? webhookUrlProblem(raw) : destinationUrlProblem(raw);
    if (problem) return Promise.resolve({ status: 0, error: problem, permanent: true });
    const url = new URL(raw);
    return new Promise<PostResult>((resolve) => {
      let settled = false;
      const finish = (result: PostResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const req = https.request({
        method,
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: options.devTargetPort !== undefined && isLoopbackHost(url.hostname) ? options.devTargetPort : 443,
        path: `${url.pathname}${url.search}`,
        agent: agents[method],
        headers: {
          ...headers,
          // The URL's own host (no port), also when a dev target port is in use.
          Host: url.host,
          "Content-Length": String(payload.byteLength),
        },
      });
      const timer = setTimeout(() => req.destroy(new TimeoutError("timeout")), timeoutMs);
      req.on("response", (res) => {
        const retryAfter = res.headers["retry-after"];
        finish({ status: res.statusCode ?? 0, ...(typeof retryAfter === "string" ? { retryAfter } : {}) });
        // Read a little of the body so a keep-alive receiver is not cut off mid-write, then close.
        let read = 0;
        const cutoff = setTimeout(() => res.destroy(), 2_000);
        res.on("data", (chunk: Buffer) => {
          read += chunk.byteLength;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on("close", () => clearTimeout(cutoff));
        res.on("error", () => undefined);
      });
      req.on("error", (err) => {
        const { error, permanent } = describeError(err, timeoutMs);
        finish({ status: 0, error, permanent });
      });
      req.end(payload);
    });
  }

  return {
    post: (url, body, headers) => send("POST", url, Buffer.from(body, "utf8"), headers, options.timeoutMs),
    put: (url, body, headers) => send("PUT", url, body, headers, options.putTimeoutMs ?? options.timeoutMs),
    close: () => {
      agents.POST.destroy();
      agents.PUT.destroy();
    },
  };
}
