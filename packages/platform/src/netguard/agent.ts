import * as http from "node:http";
import * as https from "node:https";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import * as tls from "node:tls";
import { classifyAddress, type GuardOptions } from "./classify";
import { NetGuardError } from "./errors";
import { stripBrackets } from "./ip";
import { guardedLookup, type GuardedLookupFunction, type ResolveOptions } from "./resolve";

export interface GuardedAgentOptions extends GuardOptions {
  /**
   * An extra CA (PEM) to trust, ADDED to Node's bundled Mozilla roots
   * (`tls.rootCertificates`). Note: an explicit `ca` means certificates from
   * NODE_EXTRA_CA_CERTS are not used by this agent.
   */
  ca?: string | Buffer;
  keepAlive?: boolean;
  /** Names the host in error messages, e.g. "webhook host" (the default is "host"). */
  label?: string;
  /** The resolver behind the guard; defaults to `dns.lookup`. For tests. */
  lookup?: ResolveOptions["lookup"];
}

type ConnectOptions = { host?: string | null; hostname?: string | null; socketPath?: string | undefined };
type CreateConnectionCallback = (err: Error | null, stream: Duplex) => void;

/**
 * Refuses what `lookup` cannot see: Node skips `lookup` when the host is an
 * IP literal, and a Unix socket path has no address at all.
 */
function checkTarget(options: ConnectOptions, guard: GuardOptions, label: string): NetGuardError | undefined {
  if (options.socketPath) return NetGuardError.unusable(label, options.socketPath, "Unix socket paths are not allowed");
  const host = stripBrackets(options.host ?? options.hostname ?? "");
  if (host && isIP(host)) {
    const verdict = classifyAddress(host, guard);
    if (!verdict.allowed) return NetGuardError.isLiteral(label, host, host, verdict.kind ?? "invalid", verdict.reason ?? "denied");
  }
  return undefined;
}

function refuse(err: NetGuardError, callback: CreateConnectionCallback | undefined): undefined {
  if (typeof callback !== "function") throw err;
  // Node's Agent turns a callback error into the request's 'error' event.
  process.nextTick(() => (callback as (e: Error) => void)(err));
  return undefined;
}

interface GuardParts {
  guard: GuardOptions;
  label: string;
  lookup: GuardedLookupFunction;
}

function guardParts(options: GuardedAgentOptions): GuardParts {
  const guard: GuardOptions = { allowLoopback: options.allowLoopback ?? false, allowPrivate: options.allowPrivate ?? false };
  const label = options.label ?? "host";
  const resolveOptions: ResolveOptions = { ...guard, label };
  if (options.lookup) resolveOptions.lookup = options.lookup;
  return { guard, label, lookup: guardedLookup(resolveOptions) };
}

/**
 * Both agents' createConnection: refuses what the lookup cannot check, and connects with the
 * agent's guarded lookup, which wins over one given per request.
 */
function connectGuarded<O extends ConnectOptions>(
  parts: GuardParts,
  options: O,
  callback: CreateConnectionCallback | undefined,
  connect: (options: O) => Duplex | null | undefined,
): Duplex | null | undefined {
  const blocked = checkTarget(options, parts.guard, parts.label);
  if (blocked) return refuse(blocked, callback);
  const socket = connect({ ...options, lookup: parts.lookup });
  socket?.on("error", ignoreUnowned);
  return socket;
}

/**
 * Every socket's standing 'error' listener. Node's http client leaves a
 * keep-alive socket without one for a tick (between a response's end and the
 * socket's return to the pool, and between leaving the pool and joining a
 * request), so a request destroyed in that tick (from its response's last
 * 'data', or by its AbortSignal) would throw its error as an uncaught
 * exception and take the process down. The request that owns the socket
 * still gets the error from its own listener; this one only keeps a socket
 * that nobody owns from throwing. The socket is destroyed either way.
 */
function ignoreUnowned(): void {}

class GuardedHttpsAgent extends https.Agent {
  readonly #parts: GuardParts;

  constructor(options: GuardedAgentOptions) {
    const parts = guardParts(options);
    const agentOptions: https.AgentOptions = { keepAlive: options.keepAlive ?? false, lookup: parts.lookup };
    if (options.ca !== undefined) agentOptions.ca = [...tls.rootCertificates, options.ca];
    super(agentOptions);
    this.#parts = parts;
  }

  override createConnection(options: https.RequestOptions, callback?: CreateConnectionCallback): Duplex | null | undefined {
    return connectGuarded(this.#parts, options, callback, (guarded) => super.createConnection(guarded, callback));
  }
}

class GuardedHttpAgent extends http.Agent {
  readonly #parts: GuardParts;

  constructor(options: Omit<GuardedAgentOptions, "ca">) {
    const parts = guardParts(options);
    super({ keepAlive: options.keepAlive ?? false, lookup: parts.lookup });
    this.#parts = parts;
  }

  override createConnection(options: http.ClientRequestArgs, callback?: CreateConnectionCallback): Duplex | null | undefined {
    return connectGuarded(this.#parts, options, callback, (guarded) => super.createConnection(guarded, callback));
  }
}

/**
 * An https.Agent that only connects to public addresses: host names go
 * through guardedLookup (checked and pinned: the socket connects to the
 * address that was checked), IP-literal hosts are classified before
 * connecting, Unix socket paths are refused. Denials surface as the request's
 * 'error' event with a NetGuardError.
 *
 * Only requests made with this agent are guarded: global `fetch` (undici)
 * does not use https.Agent. Redirects are not followed by node:https; a
 * client that follows them must send every hop through this agent.
 */
export function createGuardedAgent(options: GuardedAgentOptions = {}): https.Agent {
  return new GuardedHttpsAgent(options);
}

/** The plain-HTTP counterpart of createGuardedAgent (same guard, no TLS). */
export function createGuardedHttpAgent(options: Omit<GuardedAgentOptions, "ca"> = {}): http.Agent {
  return new GuardedHttpAgent(options);
}
