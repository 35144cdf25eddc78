import type { AddressKind } from "./classify";

const KIND_PHRASE: Record<AddressKind, string> = {
  loopback: "a loopback address",
  private: "a private address",
  "link-local": "a link-local address",
  metadata: "a cloud metadata address",
  multicast: "a multicast address",
  reserved: "a reserved address",
  invalid: "an invalid address",
};

/** A readable, bounded rendering of a customer-supplied host name. */
function quoteHost(hostname: string): string {
  const short = hostname.length > 255 ? `${hostname.slice(0, 255)}…` : hostname;
  return JSON.stringify(short);
}

/**
 * A connection refused by the network guard because the host is, or resolves
 * to, an address that is not public unicast, or because its port is not one
 * of those allowed. The message is safe to show to the customer who supplied
 * the host; `reason` is the detailed range (for logs).
 */
export class NetGuardError extends Error {
  /** Stable code, also seen by code that only looks at `err.code`. */
  readonly code = "ERR_NETGUARD_BLOCKED";

  constructor(
    /** The host as given (customer-supplied: treat as untrusted). */
    readonly hostname: string,
    /** The range that was hit, e.g. "private-use (10.0.0.0/8)" or "cloud metadata". */
    readonly reason: string,
    /** The denied address, when there is one. */
    readonly address: string | undefined,
    readonly kind: AddressKind | "port",
    message: string,
  ) {
    super(message);
    this.name = "NetGuardError";
  }

  /** `${label} "x" resolves to a private address (10.0.0.1)` */
  static resolvesTo(label: string, hostname: string, address: string, kind: AddressKind, reason: string): NetGuardError {
    return new NetGuardError(hostname, reason, address, kind, `${label} ${quoteHost(hostname)} resolves to ${KIND_PHRASE[kind]} (${address})`);
  }

  /** `${label} "127.0.0.1" is a loopback address` */
  static isLiteral(label: string, hostname: string, address: string, kind: AddressKind, reason: string): NetGuardError {
    return new NetGuardError(hostname, reason, address, kind, `${label} ${quoteHost(hostname)} is ${KIND_PHRASE[kind]}`);
  }

  /** For a host that cannot be checked at all (no answer, a Unix socket path...). */
  static unusable(label: string, hostname: string, reason: string): NetGuardError {
    return new NetGuardError(hostname, reason, undefined, "invalid", `${label} ${quoteHost(hostname)} cannot be used: ${reason}`);
  }

  /** `${label} "smtp.example.com" port 25 is not allowed (allowed: 80, 443)` */
  static portNotAllowed(label: string, hostname: string, port: number, allowed: readonly number[]): NetGuardError {
    return new NetGuardError(
      hostname,
      `port ${port}`,
      undefined,
      "port",
      `${label} ${quoteHost(hostname)} port ${port} is not allowed (allowed: ${allowed.join(", ")})`,
    );
  }

  static isNetGuardError(err: unknown): err is NetGuardError {
    return err instanceof NetGuardError;
  }
}
