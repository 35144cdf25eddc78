import * as dns from "node:dns";
import { isIP } from "node:net";
import { classifyAddress, type GuardOptions } from "./classify";
import { NetGuardError } from "./errors";
import { parseIp, stripBrackets } from "./ip";

/**
 * The shape of `dns.lookup` called with `{ all: true }`. `dns.lookup` itself
 * fits, and so does a small fake in tests.
 */
export type LookupAllFunction = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

export interface ResolveOptions extends GuardOptions {
  /** The resolver; defaults to `dns.lookup` (getaddrinfo, so /etc/hosts applies). */
  lookup?: LookupAllFunction | typeof dns.lookup;
  /** Names the host in error messages, e.g. "webhook host" (the default is "host"). */
  label?: string;
  /** Restricts the answer to one family (0 = both, the default). */
  family?: 0 | 4 | 6;
  /** getaddrinfo hints, passed on to the resolver. */
  hints?: number;
  /** Answer order; the default is the resolver's own ("verbatim"). */
  order?: "ipv4first" | "ipv6first" | "verbatim";
}

export interface PublicAddress {
  address: string;
  family: 4 | 6;
}

const DEFAULT_LABEL = "host";

function familyOf(address: string): 4 | 6 | undefined {
  const f = isIP(address);
  return f === 4 || f === 6 ? f : undefined;
}

function lookupAll(lookup: LookupAllFunction, hostname: string, options: ResolveOptions): Promise<dns.LookupAddress[]> {
  const lookupOptions: dns.LookupAllOptions = { all: true };
  if (options.family) lookupOptions.family = options.family;
  if (options.hints !== undefined) lookupOptions.hints = options.hints;
  if (options.order) lookupOptions.order = options.order;
  else lookupOptions.verbatim = true;
  return new Promise((resolve, reject) => {
    lookup(hostname, lookupOptions, (err, addresses: dns.LookupAddress[] | string, family?: number) => {
      if (err) return reject(err);
      // A custom resolver may ignore `all` and answer with one address.
      if (typeof addresses === "string") return resolve([{ address: addresses, family: family ?? isIP(addresses) }]);
      resolve(Array.isArray(addresses) ? addresses : []);
    });
  });
}

/**
 * Like resolvePublic, but returns every address of the answer (all of them
 * checked), in resolver order. For happy-eyeballs style connecting.
 */
export async function resolvePublicAll(hostname: string, options: ResolveOptions = {}): Promise<PublicAddress[]> {
  const label = options.label ?? DEFAULT_LABEL;
  if (typeof hostname !== "string" || hostname === "") throw NetGuardError.unusable(label, String(hostname ?? ""), "empty host name");

  const host = stripBrackets(hostname);
  const literal = parseIp(host);
  if (literal) {
    const verdict = classifyAddress(host, options);
    if (!verdict.allowed) throw NetGuardError.isLiteral(label, hostname, host, verdict.kind ?? "invalid", verdict.reason ?? "denied");
    return [{ address: host, family: literal.family }];
  }
  if (host !== hostname) throw NetGuardError.unusable(label, hostname, "brackets around a name that is not an IPv6 address");

  const lookup = (options.lookup ?? dns.lookup) as LookupAllFunction;
  const answers = await lookupAll(lookup, host, options);
  if (answers.length === 0) throw NetGuardError.unusable(label, hostname, "the name has no addresses");

  // An attacker controls their DNS: one non-public answer condemns the name,
  // whatever else it resolves to.
  const result: PublicAddress[] = [];
  for (const answer of answers) {
    const address = String(answer.address);
    const verdict = classifyAddress(address, options);
    const family = familyOf(address);
    if (!verdict.allowed || family === undefined) {
      throw NetGuardError.resolvesTo(label, hostname, address, verdict.kind ?? "invalid", verdict.reason ?? "denied");
    }
    result.push({ address, family });
  }
  return result;
}

/**
 * Resolves a host name and checks that it is public: an IP literal is
 * classified as is; a name is looked up (`{ all: true, verbatim: true }`) and
 * rejected if ANY of its addresses is not public. Returns the first address.
 *
 * Throws NetGuardError (message safe to show to the customer) when the host is
 * denied; resolver errors (ENOTFOUND, EAI_AGAIN...) are passed through as is.
 *
 * The answer is only safe to use if you then connect to the returned address
 * (pinning). Checking here and letting something else resolve the name again
 * (Chromium, fetch) is open to DNS rebinding.
 */
export async function resolvePublic(hostname: string, options: ResolveOptions = {}): Promise<PublicAddress> {
  const all = await resolvePublicAll(hostname, options);
  const first = all[0];
  if (!first) throw NetGuardError.unusable(options.label ?? DEFAULT_LABEL, hostname, "the name has no addresses");
  return first;
}

type LookupOneCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;
type LookupAllCallback = (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;
type LookupAnyCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A function with the signature of `dns.lookup` (callback forms). */
export interface GuardedLookupFunction {
  (hostname: string, callback: LookupOneCallback): void;
  (hostname: string, options: number | dns.LookupOneOptions, callback: LookupOneCallback): void;
  (hostname: string, options: dns.LookupAllOptions, callback: LookupAllCallback): void;
  (hostname: string, options: dns.LookupOptions, callback: LookupAnyCallback): void;
}

function normaliseFamily(family: unknown): 0 | 4 | 6 {
  if (family === 4 || family === "IPv4") return 4;
  if (family === 6 || family === "IPv6") return 6;
  return 0;
}

/**
 * A drop-in `dns.lookup` that only ever answers with checked, public
 * addresses (see resolvePublic), for the `lookup` option of `net.connect`,
 * `tls.connect`, `http(s).request` and `http(s).Agent`. The socket connects to
 * exactly the address that was checked, so there is no second resolution to
 * rebind. Supports `(hostname, callback)`, `(hostname, family, callback)` and
 * `(hostname, options, callback)` with `all`, `family`, `hints`, `order` and
 * `verbatim`. Denials reach the callback as NetGuardError.
 *
 * Node does not call `lookup` for IP-literal hosts: a bare `lookup` does not
 * cover `https://127.0.0.1/`. Use createGuardedAgent, which also checks
 * literals.
 */
export function guardedLookup(options: ResolveOptions = {}): GuardedLookupFunction {
  const { family: _family, hints: _hints, order: _order, ...base } = options;
  function lookup(hostname: string, optionsOrCallback: unknown, maybeCallback?: unknown): void {
    const callback = (typeof optionsOrCallback === "function" ? optionsOrCallback : maybeCallback) as LookupAnyCallback;
    if (typeof callback !== "function") throw new TypeError("guardedLookup: callback must be a function");
    let callOptions: dns.LookupOptions = {};
    if (typeof optionsOrCallback === "number") callOptions = { family: optionsOrCallback };
    else if (optionsOrCallback && typeof optionsOrCallback === "object") callOptions = optionsOrCallback as dns.LookupOptions;

    const resolveOptions: ResolveOptions = { ...base, family: normaliseFamily(callOptions.family) };
    if (callOptions.hints !== undefined) resolveOptions.hints = callOptions.hints;
    if (callOptions.order) resolveOptions.order = callOptions.order;
    else if (callOptions.verbatim === false) resolveOptions.order = "ipv4first";

    resolvePublicAll(hostname, resolveOptions).then(
      (addresses) => {
        // Leave the promise chain so a throwing callback is not swallowed.
        process.nextTick(() => {
          if (callOptions.all) return callback(null, addresses);
          const first = addresses[0];
          if (!first) return callback(NetGuardError.unusable(base.label ?? DEFAULT_LABEL, hostname, "the name has no addresses"), "", 0);
          callback(null, first.address, first.family);
        });
      },
      (err: NodeJS.ErrnoException) => process.nextTick(() => (callback as (e: NodeJS.ErrnoException) => void)(err)),
    );
  }
  return lookup as GuardedLookupFunction;
}
