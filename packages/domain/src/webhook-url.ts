/** The longest webhook_url accepted, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2_048;

/**
 * The rules for a URL Pressroom sends to (a webhook_url, a destination's
 * url), checked when a job is accepted and again before every request:
 * absolute https on the default port, a host, no credentials, no spaces or
 * control characters, at most `maxLength` characters. Returns the problem, if
 * any, as the API states it ("<field>: ...").
 */
export function outboundUrlProblem(value: unknown, field: string, maxLength: number): string | undefined {
  if (typeof value !== "string") return `${field}: must be a string`;
  if ([...value].length > maxLength) return `${field}: must be at most ${maxLength} characters`;
  // The URL parser would silently drop tabs and newlines and trim spaces: refuse them instead.
  if ([...value].some((ch) => ch.charCodeAt(0) <= 0x20 || ch.charCodeAt(0) === 0x7f)) return `${field}: must not contain spaces or control characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${field}: not a valid absolute URL`;
  }
  if (url.protocol !== "https:") return `${field}: must use https`;
  if (url.port !== "" && url.port !== "443") return `${field}: must use the default port (443)`;
  if (url.username || url.password) return `${field}: must not contain credentials`;
  if (!url.hostname) return `${field}: must have a host`;
  return undefined;
}

/** The spec's rules for a webhook_url (outboundUrlProblem, at most MAX_WEBHOOK_URL_LENGTH characters). */
export function webhookUrlProblem(value: unknown): string | undefined {
  return outboundUrlProblem(value, "webhook_url", MAX_WEBHOOK_URL_LENGTH);
}
