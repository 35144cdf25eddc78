import { NetGuardError } from "./errors";

/** The ports an http(s) URL may reach unless told otherwise: HTTP's and HTTPS's. */
export const WEB_PORTS: readonly number[] = [80, 443];

/** The port an http(s) URL connects to, its scheme's default when it names none. */
export function portOf(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** Throws NetGuardError unless the URL's port is one of `allowed`; checked before anything is resolved. */
export function checkPort(url: URL, allowed: readonly number[], label = "host"): void {
  const port = portOf(url);
  if (!allowed.includes(port)) throw NetGuardError.portNotAllowed(label, url.hostname, port, allowed);
}
