/**
 * The `date` of a running header or footer in the request's locale and time zone. Chromium fills
 * every element of class `date` with today's date in its own locale (en-US) and the machine's
 * time zone; when the request names a locale or a time zone, such an element instead gets the
 * date made here (the short style of Intl.DateTimeFormat, as Chromium's: 11/28/26 in en-US)
 * and a class Chromium leaves alone.
 */

/** An opening tag with a class attribute: the text up to its value, the quote, the value, and the rest of the tag. */
const TAG_WITH_CLASS = /(<[a-zA-Z][a-zA-Z0-9-]*\s[^>]*?\bclass\s*=\s*)(["'])([^"'>]*)\2([^>]*>)/g;

export function datedTemplate(html: string, options: { locale?: string; timeZone?: string }, now: Date = new Date()): string {
  if (options.locale === undefined && options.timeZone === undefined) return html;
  const date = new Intl.DateTimeFormat(options.locale ?? "en-US", { dateStyle: "short", timeZone: options.timeZone }).format(now);
  const text = date.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  return html.replace(TAG_WITH_CLASS, (tag, start: string, quote: string, classes: string, end: string) => {
    const names = classes.split(/\s+/);
    if (!names.includes("date")) return tag;
    return `${start}${quote}${names.map((name) => (name === "date" ? "pressroom-date" : name)).join(" ")}${quote}${end}${text}`;
  });
}
