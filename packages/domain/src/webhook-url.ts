/** The longest webhook_url accepted, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2_048;

/**
 * The spec's rules for a webhook_url, checked by the gateway when it accepts
 * a job and again by the webhook service before every delivery: absolute
 * https on the default port, a host, no credentials, no spaces or control
 * characters, at most MAX_WEBHOOK_URL_LENGTH characters. Returns the
 * problem, if any, as the API states it ("webhook_url: ...").
 */
export function webhookUrlProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return "webhook_url: must be a string";
  if ([...value].length > MAX_WEBHOOK_URL_LENGTH) return `webhook_url: must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  // The URL parser would silently drop tabs and newlines and trim spaces: refuse them instead.
  if ([...value].some((ch) => ch.charCodeAt(0) <= 0x20 || ch.charCodeAt(0) === 0x7f)) return "webhook_url: must not contain spaces or control characters";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "webhook_url: not a valid absolute URL";
  }
  if (url.protocol !== "https:") return "webhook_url: must use https";
  if (url.port !== "" && url.port !== "443") return "webhook_url: must use the default port (443)";
  if (url.username || url.password) return "webhook_url: must not contain credentials";
  if (!url.hostname) return "webhook_url: must have a host";
  return undefined;
}
